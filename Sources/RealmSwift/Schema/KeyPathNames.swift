/// Key paths to property names, recorded by running the key path on a prototype whose accessors
/// report what they read (Linux cannot print a key path's components).
enum KeyPathNames {
    /// The property names `keyPath` walks through, e.g. `["dog", "name"]` for `\Person.dog?.name`.
    /// - Throws: ``Realm/Error`` `.invalidProperty` when the key path reads no persisted property.
    static func names<Root: ObjectBase, Value>(_ keyPath: KeyPath<Root, Value>) throws -> [String] {
        try names(keyPath as PartialKeyPath<Root>)
    }

    /// ``names(_:)`` of a key path whose value type is erased.
    static func names<Root: ObjectBase>(_ keyPath: PartialKeyPath<Root>) throws -> [String] {
        try recorded(Root.self, "\(keyPath)") { _ = $0[keyPath: keyPath] }
    }

    /// The property names `read` reads from a prototype of `Root` whose accessors record them
    /// (`what` names the key path in the error).
    static func recorded<Root: ObjectBase>(_ root: Root.Type, _ what: String, _ read: (Root) -> Void) throws -> [String] {
        let proto = ClassInfo.of(Root.self).makePrototype()
        let recorder = IndexRecorder()
        proto._rlmRecorder = recorder
        guard let root = proto as? Root else { throw Realm.Error(.invalidProperty, "cannot record \(what)") }
        read(root)
        guard !recorder.steps.isEmpty else {
            throw Realm.Error(.invalidProperty, "the key path \(what) does not name a @Persisted property of \(Root.self)")
        }
        return recorder.steps.map { $0.0.properties[$0.1].name }
    }

    /// The dotted form of ``names(_:)``: `"dog.name"`.
    static func path<Root: ObjectBase, Value>(_ keyPath: KeyPath<Root, Value>) throws -> String {
        try names(keyPath).joined(separator: ".")
    }

    /// The dotted names of key paths given to `observe(keyPaths:)`; traps on one that reads no
    /// persisted property (as RealmSwift does).
    static func dotted<Root: ObjectBase>(_ keyPaths: [PartialKeyPath<Root>]) -> [String] {
        keyPaths.map { kp in
            do { return try names(kp).joined(separator: ".") } catch { fatalError("\(error)") }
        }
    }
}
