import RealmSwift

// See PropertySiteModelsA.swift: `echo` shares its line and column (8, 5) with `SiteBase.shared`.
//
//
//
final class SiteDerived: SiteBase {
    @Persisted var echo = 3
    @Persisted var last = 4
}

/// Wrappers made by a shared helper: one place for properties of two types.
final class SiteHelped: Object {
    @Persisted var number = 0
    @Persisted var text = ""

    static func made<T: _Persistable>(_ value: T) -> Persisted<T> { Persisted(wrappedValue: value) }

    init(text: String) {
        _text = Self.made(text)
        super.init()
    }

    required init() {
        _number = Self.made(5)
        super.init()
    }
}
