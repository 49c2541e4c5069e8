import Foundation
import RealmQuery
import RealmSyncProtocol

/// Who may read and write which objects (Spec/SYNC.md §10): for each class, roles tried in order;
/// the first whose `applyWhen` the user's claims satisfy gives a read filter and a write filter,
/// queries over the object in which `%user.id` and `%user.claims.NAME` stand for the user's
/// values. A class without roles of its own takes the default roles; a user no role applies to
/// may neither read nor write the class. Filters are evaluated by PostgreSQL, as subscriptions are;
/// a write the user may not make is not applied, and its client gets the object back as the store
/// has it (RealmSwift's compensating write).
///
/// ```json
/// {
///   "classes": {
///     "Task": [
///       { "name": "admin", "applyWhen": { "role": "admin" }, "read": "TRUEPREDICATE", "write": "TRUEPREDICATE" },
///       { "name": "user", "read": "ownerId == %user.id OR shared == true", "write": "ownerId == %user.id" }
///     ]
///   },
///   "defaultRoles": [ { "name": "everyone", "read": "TRUEPREDICATE", "write": "TRUEPREDICATE" } ]
/// }
/// ```
public struct Permissions: Sendable, Equatable {
    /// A role: when it applies, and what it lets its users read and write.
    struct Role: Sendable, Equatable, Decodable {
        var name: String
        /// Claims the user's token must hold with exactly these values; none: the role always
        /// applies.
        var applyWhen: [String: ClaimValue]?
        var read: String
        var write: String
    }

    private struct File: Decodable {
        var classes: [String: [Role]]?
        var defaultRoles: [Role]?
    }

    var classes: [String: [Role]]
    var defaultRoles: [Role]

    init(classes: [String: [Role]], defaultRoles: [Role]) {
        self.classes = classes
        self.defaultRoles = defaultRoles
    }

    /// The permissions of a JSON file (the form above).
    /// - Throws: ``SyncServerError`` naming what is wrong: not JSON of that form, or a filter
    ///   that does not parse.
    public init(json: Data) throws(SyncServerError) {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: json)
        } catch {
            throw SyncServerError("the permissions file is not of the documented form: \(error)")
        }
        classes = file.classes ?? [:]
        defaultRoles = file.defaultRoles ?? []
        let sample = SyncUser(id: "user")
        for (cls, roles) in classes.map({ ($0.key, $0.value) }) + [("default roles", defaultRoles)] {
            for role in roles {
                for (what, filter) in [("read", role.read), ("write", role.write)] {
                    do {
                        _ = try QueryPredicate.parse(try Self.substitute(filter, user: sample))
                    } catch let error as QueryError {
                        throw SyncServerError("the \(what) filter of role \(role.name) of \(cls) does not parse: \(error.message)")
                    } catch {
                        throw SyncServerError("the \(what) filter of role \(role.name) of \(cls): \(error)")
                    }
                }
            }
        }
    }

    /// The role `user` has on `className`; nil when none applies.
    func role(of className: String, for user: SyncUser) -> Role? {
        (classes[className] ?? defaultRoles).first { role in
            (role.applyWhen ?? [:]).allSatisfy { user.claims[$0.key] == $0.value }
        }
    }

    /// `filter` with `%user.id` and `%user.claims.NAME` replaced by the user's values as query
    /// literals (a claim the user lacks is `nil`); quoted text is left as it is.
    static func substitute(_ filter: String, user: SyncUser) throws(SyncServerError) -> String {
        let scalars = Array(filter.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        var quote: Unicode.Scalar?
        while i < scalars.count {
            let c = scalars[i]
            if let q = quote {
                out.append(c)
                if c == "\\", i + 1 < scalars.count {
                    out.append(scalars[i + 1])
                    i += 2
                    continue
                }
                if c == q { quote = nil }
                i += 1
                continue
            }
            if c == "\"" || c == "'" {
                quote = c
                out.append(c)
                i += 1
                continue
            }
            guard c == "%" else {
                out.append(c)
                i += 1
                continue
            }
            // %user.id or %user.claims.NAME
            var j = i + 1
            while j < scalars.count,
                scalars[j].properties.isAlphabetic || ("0"..."9").contains(scalars[j]) || scalars[j] == "_"
                    || scalars[j] == "." || scalars[j] == "-"
            {
                j += 1
            }
            let name = String(String.UnicodeScalarView(scalars[(i + 1)..<j]))
            let literal: String
            if name == "user.id" {
                literal = Self.literal(.string(user.id))
            } else if name.hasPrefix("user.claims."), name.count > "user.claims.".count {
                literal = Self.literal(user.claims[String(name.dropFirst("user.claims.".count))] ?? .null)
            } else {
                throw SyncServerError("unknown variable %\(name) in \"\(filter)\" (%user.id and %user.claims.NAME are known)")
            }
            out.append(contentsOf: literal.unicodeScalars)
            i = j
        }
        return String(out)
    }

    /// `value` as a literal of the query language.
    static func literal(_ value: ClaimValue) -> String {
        switch value {
        case .null: return "nil"
        case .bool(let b): return b ? "true" : "false"
        case .number(let d): return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)"
        case .string(let s):
            return "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
    }

    /// What `user` may read of `classes`, as text that changes exactly when the roles or the
    /// values substituted in their read filters do (a claim changed): a client file bootstrapped
    /// under other read roles is bootstrapped again (§10).
    func readRoles(of classes: some Sequence<String>, for user: SyncUser) -> String {
        classes.sorted().map { name in
            guard let role = role(of: name, for: user) else { return "\(name)\tnone" }
            return "\(name)\t\(role.name)\t" + ((try? Self.substitute(role.read, user: user)) ?? "")
        }.joined(separator: "\n")
    }

    /// What `user` may read of `className`, compiled on the class's table; a filter that does not
    /// compile on the class as the store has it, or no role, reads nothing.
    func readFilter(_ className: String, for user: SyncUser, catalog: Catalog) -> SubscriptionSQL {
        filter(className, for: user, catalog: catalog) { $0.read }
    }

    /// What `user` may write of `className` (as ``readFilter(_:for:catalog:)``): an object must
    /// meet it before and after the write.
    func writeFilter(_ className: String, for user: SyncUser, catalog: Catalog) -> SubscriptionSQL {
        filter(className, for: user, catalog: catalog) { $0.write }
    }

    private func filter(_ className: String, for user: SyncUser, catalog: Catalog, _ text: (Role) -> String) -> SubscriptionSQL {
        guard let role = role(of: className, for: user), let query = try? Self.substitute(text(role), user: user),
            let sql = try? SubscriptionSQL(Subscription(className: className, query: query), catalog: catalog)
        else { return SubscriptionSQL.nothing }
        return sql
    }
}
