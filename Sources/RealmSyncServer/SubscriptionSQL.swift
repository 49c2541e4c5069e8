import PostgresNIO
import RealmQuery
import RealmSyncProtocol

/// A subscription's query (Spec/QUERY.md) compiled to a SQL condition on its class's table
/// (Spec/SYNC.md §7.4): comparisons with constants of top-level properties, of a link's target's
/// primary key (`owner._id`, or the link with `nil`) and of a collection's `@count`; `BEGINSWITH`,
/// `ENDSWITH`, `CONTAINS` and `LIKE` on strings (`[c]` allowed), `IN`, `BETWEEN`, `AND`, `OR`,
/// `NOT` and `TRUEPREDICATE`. Anything else is `invalidQuery`, naming what is not supported.
struct SubscriptionSQL: Sendable {
    /// The condition, with `$1`… placeholders numbered from `firstPlaceholder`.
    var condition: String
    var binds: [SyncValue]
    var tags: [UInt8]
    /// The properties of the class the condition reads.
    var properties: Set<String> = []

    /// A condition no object meets.
    static let nothing = SubscriptionSQL(condition: "FALSE")

    private init(condition: String) {
        self.condition = condition
        binds = []
        tags = []
    }

    init(_ subscription: Subscription, catalog: Catalog) throws(SessionFailure) {
        guard let cls = catalog.classes[subscription.className] else {
            throw .invalidQuery("the subscription names the class \(subscription.className), which is not in the synced schema")
        }
        let predicate: QueryPredicate
        do {
            predicate = try QueryPredicate.parse(subscription.query)
        } catch {
            throw .invalidQuery("the subscription query of \(cls.name) does not parse: \(error.message)")
        }
        var compiler = Compiler(cls: cls, catalog: catalog)
        condition = try compiler.sql(predicate)
        binds = compiler.binds
        tags = compiler.tags
        properties = compiler.properties
    }

    /// Appends the condition's values to `bindings` (which must hold `offset` values already) and
    /// returns the condition with its placeholders moved past them.
    func bound(into bindings: inout PostgresBindings, offset: Int) throws -> String {
        for (value, tag) in zip(binds, tags) { try SQLMapping.bind(value, tag: tag, into: &bindings) }
        guard offset > 0 else { return condition }
        var out = ""
        var i = condition.startIndex
        while i < condition.endIndex {
            if condition[i] == "$" {
                var j = condition.index(after: i)
                while j < condition.endIndex, condition[j].isNumber { j = condition.index(after: j) }
                out += "$\(Int(condition[condition.index(after: i)..<j])! + offset)"
                i = j
            } else {
                out.append(condition[i])
                i = condition.index(after: i)
            }
        }
        return out
    }

    private struct Compiler {
        let cls: SyncClass
        let catalog: Catalog
        var binds: [SyncValue] = []
        var tags: [UInt8] = []
        var properties: Set<String> = []

        mutating func sql(_ p: QueryPredicate) throws(SessionFailure) -> String {
            switch p {
            case .constant(let b): return b ? "TRUE" : "FALSE"
            case .and(let ps):
                guard !ps.isEmpty else { return "TRUE" }
                var parts: [String] = []
                for q in ps { parts.append("(" + (try sql(q)) + ")") }
                return parts.joined(separator: " AND ")
            case .or(let ps):
                guard !ps.isEmpty else { return "FALSE" }
                var parts: [String] = []
                for q in ps { parts.append("(" + (try sql(q)) + ")") }
                return parts.joined(separator: " OR ")
            case .not(let q): return "NOT (" + (try sql(q)) + ")"
            case .comparison(let c): return try comparison(c)
            }
        }

        /// What a comparison's property side reads: a SQL expression on the class's table, the
        /// tag of its values, and whether it only compares with nil (a link itself).
        struct Operand {
            var sql: String
            var tag: UInt8
            var nullOnly = false
            /// The property read.
            var property = ""
        }

        /// The operand `e` names: a scalar property of the class (or `_id`), a link (with nil),
        /// a link's `_id` (the link's column holds the target's key), or a collection's `@count`.
        func operand(_ e: QueryExpression) -> Operand? {
            switch e.kind {
            case .keyPath(let path) where path.variable == nil && (1...2).contains(path.components.count):
                let name = path.components[0]
                if path.components == ["_id"] { return Operand(sql: SQLMapping.quoted("_id"), tag: cls.primaryKeyTag, property: "_id") }
                guard let p = cls.properties.first(where: { $0.name == name }) else { return nil }
                if p.valueTag == 12 {
                    // A single link to a class with a primary key.
                    guard p.flags & 0b1110 == 0, let target = catalog.classes[p.linkTarget], !target.isEmbedded else { return nil }
                    switch Array(path.components.dropFirst()) {
                    case []: return Operand(sql: SQLMapping.quoted(name), tag: target.primaryKeyTag, nullOnly: true, property: name)
                    case ["_id"]: return Operand(sql: SQLMapping.quoted(name), tag: target.primaryKeyTag, property: name)
                    default: return nil
                    }
                }
                guard path.components.count == 1, StoredValues.isPlain(p) else { return nil }
                return Operand(
                    sql: p.valueTag == 8 ? Self.timestampExpression(name) : SQLMapping.quoted(name), tag: p.valueTag, property: name)
            case .aggregate(.count, let collection, nil) where collection.variable == nil && collection.components.count == 1:
                guard let p = cls.properties.first(where: { $0.name == collection.components[0] }), p.flags & 0b1110 != 0 else {
                    return nil
                }
                let column = SQLMapping.quoted(p.name)
                // Lists and sets are jsonb arrays, maps jsonb objects (§8.1); no value counts 0.
                let count =
                    p.flags & 0b1000 != 0
                    ? "(SELECT count(*) FROM jsonb_object_keys(coalesce(\(column), '{}'::jsonb)))"
                    : "coalesce(jsonb_array_length(\(column)), 0)"
                return Operand(sql: count, tag: 3, property: p.name)
            default:
                return nil
            }
        }

        mutating func placeholder(_ v: QueryValue, tag: UInt8, what: String) throws(SessionFailure) -> String {
            let value: SyncValue
            switch (v, tag) {
            case (.integer(let i), 3): value = .int(i)
            case (.integer(let i), 5): value = .double(Double(i))
            case (.integer(let i), 4): value = .float(Float(i))
            case (.fractional(let s), 5): value = .double(Double(s) ?? .nan)
            case (.fractional(let s), 4): value = .float(Float(s) ?? .nan)
            case (.string(let s), 6): value = .string(s)
            case (.bool(let b), 1), (.bool(let b), 2): value = .bool(b)
            case (.typed(.binary(let b)), 7): value = .binary(b)
            case (.typed(.objectId(let b)), 9) where b.count == 12: value = .objectId(b)
            case (.typed(.uuid(let u)), 10): value = .uuid(SQLMapping.bytes(u))
            case (.typed(.timestamp(let s, let ns)), 8):
                // Compared as nanoseconds since 1970 (see `timestampExpression`), exactly.
                binds.append(.string(String(Int128(s) * 1_000_000_000 + Int128(ns))))
                tags.append(6)
                return "$\(binds.count)::numeric"
            default: throw .invalidQuery("\(what): the constant \(v) cannot be compared with this property in a subscription")
            }
            binds.append(value)
            tags.append(tag)
            return "$\(binds.count)"
        }

        /// A timestamp property as nanoseconds since 1970 (a `numeric`): its column keeps
        /// microseconds, its companion column the nanoseconds within the second (§8.1).
        static func timestampExpression(_ property: String) -> String {
            let column = SQLMapping.quoted(property)
            let ns = SQLMapping.quoted(SQLMapping.nanosecondsColumn(property))
            return "(floor(extract(epoch from \(column))) * 1000000000 + \(ns))"
        }

        mutating func comparison(_ c: QueryComparison) throws(SessionFailure) -> String {
            let text = c.description
            guard c.modifier == nil else { throw .invalidQuery("\(text): ANY, ALL and NONE are not supported in subscriptions") }
            var left = c.left
            var right = c.right
            var op = c.op
            if operand(left) == nil, operand(right) != nil, case .constant = left.kind {
                swap(&left, &right)
                switch op {
                case .less: op = .greater
                case .greater: op = .less
                case .lessOrEqual: op = .greaterOrEqual
                case .greaterOrEqual: op = .lessOrEqual
                case .equal, .notEqual: break
                default: throw .invalidQuery("\(text): the property must be on the left of \(op.rawValue)")
                }
            }
            guard let col = operand(left) else {
                throw .invalidQuery(
                    "\(text): subscriptions compare a top-level property of \(cls.name) other than a collection, an embedded object, a mixed value or a decimal, a link's _id, or a collection's @count (not \(left))"
                )
            }
            guard case .constant(let constant) = right.kind else {
                throw .invalidQuery("\(text): subscriptions compare a property with a constant")
            }
            properties.insert(col.property)
            guard !col.nullOnly || constant == .null else {
                throw .invalidQuery("\(text): a link compares with nil; compare its _id with a constant")
            }
            let name = col.sql
            let insensitive = c.options.contains(.caseInsensitive)
            guard !c.options.contains(.diacriticInsensitive) else { throw .invalidQuery("\(text): [d] is not supported in subscriptions") }
            if constant == .null {
                switch op {
                case .equal: return "\(name) IS NULL"
                case .notEqual: return "\(name) IS NOT NULL"
                default: throw .invalidQuery("\(text): only == and != compare with nil")
                }
            }
            switch op {
            case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual:
                if insensitive {
                    guard col.tag == 6, op == .equal || op == .notEqual else {
                        throw .invalidQuery("\(text): [c] only applies to strings with == and !=")
                    }
                    let p = try placeholder(constant, tag: col.tag, what: text)
                    return "lower(\(name)) \(op == .equal ? "=" : "<>") lower(\(p))"
                }
                let p = try placeholder(constant, tag: col.tag, what: text)
                let sqlOp = ["==": "=", "!=": "IS DISTINCT FROM"][op.rawValue] ?? op.rawValue
                return "\(name) \(sqlOp) \(p)"
            case .between:
                guard case .list(let bounds) = constant, bounds.count == 2 else {
                    throw .invalidQuery("\(text): BETWEEN takes {lower, upper}")
                }
                let lo = try placeholder(bounds[0], tag: col.tag, what: text)
                let hi = try placeholder(bounds[1], tag: col.tag, what: text)
                return "\(name) BETWEEN \(lo) AND \(hi)"
            case .in:
                guard case .list(let items) = constant else { throw .invalidQuery("\(text): IN takes a list {a, b, …}") }
                guard !items.isEmpty else { return "FALSE" }
                var ps: [String] = []
                for item in items {
                    if item == .null { ps.append("NULL") } else { ps.append(try placeholder(item, tag: col.tag, what: text)) }
                }
                return "\(name) IN (\(ps.joined(separator: ", ")))"
            case .beginsWith, .endsWith, .contains, .like:
                guard col.tag == 6, case .string(let s) = constant else {
                    throw .invalidQuery("\(text): \(op.rawValue) applies to strings")
                }
                let escaped = s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
                    .replacingOccurrences(of: "_", with: "\\_")
                let pattern: String
                switch op {
                case .beginsWith: pattern = escaped + "%"
                case .endsWith: pattern = "%" + escaped
                case .contains: pattern = "%" + escaped + "%"
                default: pattern = escaped.replacingOccurrences(of: "*", with: "%").replacingOccurrences(of: "?", with: "_")
                }
                let p = try placeholder(.string(pattern), tag: 6, what: text)
                return "\(name) \(insensitive ? "ILIKE" : "LIKE") \(p)"
            }
        }
    }
}
