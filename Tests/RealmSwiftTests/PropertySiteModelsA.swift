import RealmSwift

// Accessors find their property by where it is declared. `SiteBase.shared` here and
// `SiteDerived.echo` in PropertySiteModelsB.swift sit at the same line and column of two files:
// only the file tells them apart. Keep both declarations on line 8, indented by four spaces (the
// test checks that they are).
class SiteBase: Object {
    @Persisted var shared = 1
    @Persisted var base = 2
}

/// Properties whose wrappers are made again, or made by hand, in its initializers.
final class SiteInitialized: Object {
    @Persisted var first = 0
    @Persisted var second = 0
    @Persisted var third = ""

    /// Assigns before `super.init()`: the compiler makes those wrappers a second time.
    init(first: Int, second: Int) {
        self.second = second
        self.first = first
        super.init()
    }

    /// Makes a wrapper itself, away from the declaration.
    init(third: String) {
        _third = Persisted(wrappedValue: third)
        super.init()
    }

    required init() { super.init() }
}
