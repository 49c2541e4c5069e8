import RealmSwift

// Models whose wrappers are made in unusual places: accessors find their property by the storage
// key path Swift passes them, wherever the wrapper was made.

class SiteBase: Object {
    @Persisted var shared = 1
    @Persisted var base = 2
}

final class SiteDerived: SiteBase {
    @Persisted var echo = 3
    @Persisted var last = 4
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

/// Two properties of one type, one wrapper copied from the other.
final class SiteCopied: Object {
    @Persisted var a = 0
    @Persisted var b = 0

    /// `b`'s wrapper is a copy of `a`'s, made after `a` was read (and so resolved).
    static func copying(a: Int) -> SiteCopied {
        let o = SiteCopied()
        o.a = a
        _ = o.a
        o.copyAToB()
        return o
    }

    func copyAToB() { _b = _a }
}
