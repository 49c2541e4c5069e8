import Foundation
import RealmStorage
import RealmSyncProtocol

/// The conflict state of the properties that have no plain typed column (Spec/SYNC.md §8.1):
/// decimal128 and mixed values, lists (every element ever inserted, with its identity, anchor and
/// order key), sets (every element ever added or erased) and maps (every key ever set or erased).
/// Kept in a class table's `_sync_values bytea`, in the encoding of §4.3, so a server reads it
/// back exactly; the SQL-readable columns of the same properties (`numeric`, `jsonb`) are written
/// from it.
enum StoredValues {
    /// Whether `p` is stored in a plain typed column that the server reads back (scalars and
    /// links); other properties are kept in `_sync_values`.
    static func isPlain(_ p: SyncClass.Property) -> Bool {
        p.flags & 0b1110 == 0 && p.valueTag != 11 && p.valueTag != 13 && p.valueTag != 17
    }

    private enum Kind: UInt8 {
        case scalar = 0, list = 1, set = 2, map = 3, embedded = 4
    }

    /// The `_sync_values` of `object`'s properties of `cls` that are not plain.
    static func encode(_ object: SyncStoreModel.Object, cls: SyncClass) -> [UInt8] {
        var w = WireWriter()
        let properties = cls.properties.filter { !isPlain($0) }
        w.count(properties.count)
        func key(_ k: OrderKey) {
            w.u64(k.clock)
            w.data(k.clientFileId)
        }
        for p in properties {
            w.string(p.name)
            if p.flags & 2 != 0 {
                w.u8(Kind.list.rawValue)
                let list = object.lists[p.name] ?? SyncList()
                let ids = list.allIds
                w.count(ids.count)
                for id in ids {
                    let e = list.elements[id]!
                    w.elementId(e.id)
                    w.elementId(e.after)
                    w.u8(e.isErased ? 1 : 0)
                    key(object.listKeys[p.name]?[id] ?? OrderKey(clock: id.clock, clientFileId: id.clientFileId))
                    w.value(e.value)
                }
            } else if p.flags & 4 != 0 {
                w.u8(Kind.set.rawValue)
                let slots = (object.sets[p.name] ?? [:]).sorted { $0.value.key < $1.value.key }
                w.count(slots.count)
                for (_, slot) in slots {
                    w.value(slot.value)
                    w.u8(slot.present ? 1 : 0)
                    key(slot.key)
                }
            } else if p.flags & 8 != 0 {
                w.u8(Kind.map.rawValue)
                let slots = (object.maps[p.name] ?? [:]).sorted { $0.key < $1.key }
                w.count(slots.count)
                for (k, slot) in slots {
                    w.string(k)
                    w.value(slot.value)
                    w.u8(slot.present ? 1 : 0)
                    key(slot.key)
                }
            } else if p.valueTag == 13 {
                // The embedded object as last set whole, and each of its properties set since, by
                // path (§6.6), each with its order key.
                w.u8(Kind.embedded.rawValue)
                let slots = object.properties.filter { $0.key == p.name || $0.key.hasPrefix(p.name + ".") }.sorted { $0.key < $1.key }
                w.count(slots.count)
                for (path, slot) in slots {
                    w.string(path)
                    w.value(slot.value)
                    key(slot.key)
                }
            } else {
                w.u8(Kind.scalar.rawValue)
                w.value(object.properties[p.name]?.value ?? .null)
            }
        }
        return w.bytes
    }

    /// Puts the state `bytes` (a `_sync_values`) holds in `object`; a scalar's order key comes from
    /// `clocks` (`_sync_clocks`), and a scalar never set is left out (without `clocks`, every
    /// scalar is put in, with a zero order key: for reading values only).
    static func decode(_ bytes: [UInt8], into object: inout SyncStoreModel.Object, clocks: [String: String]?) throws {
        var r = WireReader(bytes)
        func key() throws(WireError) -> OrderKey { OrderKey(clock: try r.u64(), clientFileId: try r.data()) }
        func flag() throws(WireError) -> Bool { try r.u8() != 0 }
        for _ in 0..<(try r.count(minimumItemSize: 2)) {
            let name = try r.string()
            switch Kind(rawValue: try r.u8()) {
            case .scalar:
                let value = try r.value()
                if let clocks {
                    if let k = clocks[name].flatMap(SyncStore.orderKey) {
                        object.properties[name] = SyncStoreModel.Slot(value: value, key: k)
                    }
                } else {
                    object.properties[name] = SyncStoreModel.Slot(value: value, key: OrderKey(clock: 0, clientFileId: []))
                }
            case .list:
                var list = SyncList()
                var keys: [ElementId: OrderKey] = [:]
                for _ in 0..<(try r.count(minimumItemSize: 20)) {
                    let id = try r.elementId()
                    let after = try r.elementId()
                    let erased = try flag()
                    keys[id] = try key()
                    guard list.insert(id, after: after, try r.value()) else {
                        throw SyncServerError("the stored list \(name) has an element before its anchor")
                    }
                    if erased { list.erase(id) }
                }
                object.lists[name] = list
                object.listKeys[name] = keys
            case .set:
                var slots: [SyncValue: SyncStoreModel.Slot] = [:]
                for _ in 0..<(try r.count(minimumItemSize: 3)) {
                    let value = try r.value()
                    slots[value] = SyncStoreModel.Slot(value: value, present: try flag(), key: try key())
                }
                object.sets[name] = slots
            case .map:
                var slots: [String: SyncStoreModel.Slot] = [:]
                for _ in 0..<(try r.count(minimumItemSize: 4)) {
                    let k = try r.string()
                    let value = try r.value()
                    slots[k] = SyncStoreModel.Slot(value: value, present: try flag(), key: try key())
                }
                object.maps[name] = slots
            case .embedded:
                for _ in 0..<(try r.count(minimumItemSize: 4)) {
                    let path = try r.string()
                    let value = try r.value()
                    object.properties[path] = SyncStoreModel.Slot(value: value, key: try key())
                }
            case nil: throw SyncServerError("the stored values of \(name) have an unknown kind")
            }
        }
    }

    /// The state a client is sent of a property kept here: a scalar's value (nil when never set),
    /// a list's live values and their identities, a set's present elements, a map's present
    /// entries (sorted by key).
    static func state(of p: SyncClass.Property, in object: SyncStoreModel.Object) -> PropertyState? {
        if p.flags & 2 != 0 {
            let list = object.lists[p.name] ?? SyncList()
            let ids = list.ids
            return PropertyState(p.name, .list(ids.map { list.elements[$0]!.value }), ids: ids)
        } else if p.flags & 4 != 0 {
            let present = (object.sets[p.name] ?? [:]).values.filter(\.present).sorted { $0.key < $1.key }.map(\.value)
            return PropertyState(p.name, .set(present))
        } else if p.flags & 8 != 0 {
            let entries = (object.maps[p.name] ?? [:]).filter(\.value.present).sorted { $0.key < $1.key }
            return PropertyState(p.name, .map(entries.map { SyncValue.MapEntry($0.key, $0.value.value) }))
        }
        if p.valueTag == 13 { return embedded(p.name, in: object).map { PropertyState(p.name, $0) } }
        return object.properties[p.name].map { PropertyState(p.name, $0.value) }
    }

    /// The embedded object `path` as it stands: the object last set whole, with each property set
    /// under it since (every such property is newer: the model drops older ones); nil when it was
    /// never set. Properties set under an object that is null are not shown.
    static func embedded(_ path: String, in object: SyncStoreModel.Object) -> SyncValue? {
        guard let base = object.properties[path] else { return nil }
        guard case .embedded(var states) = base.value else { return base.value }
        // Parents before children, so that an embedded object set under another is there first.
        let under = object.properties.filter { $0.key.hasPrefix(path + ".") }.sorted { $0.key.count < $1.key.count }
        for (key, slot) in under {
            let names = key.dropFirst(path.count + 1).split(separator: ".").map(String.init)
            states = setting(slot.value, at: names[...], in: states)
        }
        return .embedded(states)
    }

    private static func setting(_ value: SyncValue, at names: ArraySlice<String>, in states: [PropertyState]) -> [PropertyState] {
        guard let first = names.first else { return states }
        var out = states
        let i = out.firstIndex { $0.name == first }
        if names.count == 1 {
            if let i { out[i].value = value } else { out.append(PropertyState(first, value)) }
        } else if let i, case .embedded(let inner) = out[i].value {
            out[i].value = .embedded(setting(value, at: names.dropFirst(), in: inner))
        }
        return out
    }

    // MARK: The SQL-readable columns

    /// What the SQL-readable column of `p` holds for `state` (nil: SQL null): a decimal128 as the
    /// text of a `numeric`, anything else as the text of a `jsonb` (§8.1).
    static func column(_ p: SyncClass.Property, _ state: PropertyState?) -> String? {
        guard let state else { return nil }
        switch state.value {
        case .null: return nil
        case .decimal128(let low, let high): return numeric(low: low, high: high)
        case .list(let items), .set(let items): return "[" + items.map(json).joined(separator: ",") + "]"
        case .map(let entries): return "{" + entries.map { quoted($0.key) + ":" + json($0.value) }.joined(separator: ",") + "}"
        default: return json(state.value)
        }
    }

    /// A decimal128 as PostgreSQL's `numeric` reads it.
    static func numeric(low: UInt64, high: UInt64) -> String {
        let text = Decimal128(low: low, high: high).description
        switch text {
        case "NaN", "-NaN", "sNaN", "-sNaN": return "NaN"
        case "Inf", "+Inf": return "Infinity"
        case "-Inf": return "-Infinity"
        default: return text
        }
    }

    /// `value` as JSON (§8.1): numbers as numbers (a float or double that is not finite as the
    /// string `"NaN"`, `"Infinity"` or `"-Infinity"`), binary as base64, a timestamp as an
    /// ISO 8601 string with nanoseconds, an ObjectId as 24 hexadecimal digits, a UUID in its
    /// canonical form, a decimal128 as a string, a link as its target's primary key, a mixed value
    /// as `{"t": tag, "v": value}` (a link's also with `"c": class`).
    static func json(_ value: SyncValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .float(let f): return f.isFinite ? "\(f)" : quoted(f.isNaN ? "NaN" : f < 0 ? "-Infinity" : "Infinity")
        case .double(let d): return d.isFinite ? "\(d)" : quoted(d.isNaN ? "NaN" : d < 0 ? "-Infinity" : "Infinity")
        case .string(let s): return quoted(s)
        case .binary(let b): return quoted(Data(b).base64EncodedString())
        case .timestamp(let s, let ns):
            let whole = Date(timeIntervalSince1970: Double(s)).ISO8601Format()  // …T…Z, whole seconds
            let fraction = String(ns + 1_000_000_000).dropFirst()
            return quoted(whole.dropLast() + "." + fraction + "Z")
        case .objectId(let b): return quoted(Hex.string(b))
        case .uuid(let b): return quoted(SQLMapping.uuid(b).uuidString.lowercased())
        case .decimal128(let low, let high): return quoted(numeric(low: low, high: high))
        case .link(_, let key): return json(key)
        case .mixed(.link(let c, let key)): return "{\"t\":12,\"c\":\(quoted(c)),\"v\":\(json(key))}"
        case .mixed(let inner): return "{\"t\":\(inner.tag),\"v\":\(json(inner))}"
        case .embedded(let properties): return "{" + properties.map { quoted($0.name) + ":" + json($0.value) }.joined(separator: ",") + "}"
        case .list(let items), .set(let items): return "[" + items.map(json).joined(separator: ",") + "]"
        case .map(let entries): return "{" + entries.map { quoted($0.key) + ":" + json($0.value) }.joined(separator: ",") + "}"
        }
    }

    /// `s` as a JSON string (Foundation's encoder escapes it); U+0000, which `jsonb` cannot hold,
    /// becomes U+FFFD.
    static func quoted(_ s: some StringProtocol) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let text = String(s).replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
        return (try? encoder.encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}
