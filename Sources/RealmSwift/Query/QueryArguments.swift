import Foundation
import RealmQuery
import RealmStorage

/// Conversions of the Swift values given for `%@` and `%K` to the query engine's arguments.
enum QueryArguments {
    static func convert(_ args: [Any?]) throws -> [QueryArgument] {
        try args.map(convert)
    }

    static func convert(_ arg: Any?) throws -> QueryArgument {
        guard let v = arg.flatMap(unwrapOptional), !(v is NSNull) else { return .value(.null) }
        if let o = v as? ObjectBase { return object(o) }
        if let s = v as? String { return .value(.string(s)) }
        if let s = v as? Substring { return .value(.string(String(s))) }
        if let r = v as? any RangeExpression, let bounds = try rangeBounds(r) { return .values(bounds) }
        if let seq = v as? any Sequence, !(v is Data) {
            var out: [StorageValue] = []
            for case let e in seq as any Sequence {
                switch try convert(e) {
                case .value(let x): out.append(x)
                case .object(_, let key): out.append(.link(key))
                default: throw Realm.Error(.invalidValue, "a query argument list cannot contain \(type(of: e))")
                }
            }
            return .values(out)
        }
        return .value(try scalar(v))
    }

    static func object(_ o: ObjectBase) -> QueryArgument {
        // An unmanaged object is in no table: a key that never exists matches no stored link.
        .object(table: o._rlmClass.className, key: o._rlmRealm == nil ? ObjectKey(-1) : o._rlmKey)
    }

    static func scalar(_ v: Any) throws -> StorageValue {
        switch v {
        case let x as AnyRealmValue:
            if case .object(let o) = x { return o._rlmRealm == nil ? .link(ObjectKey(-1)) : .link(o._rlmKey) }
            return try x._rlmEncode(nil).value
        case let x as Bool: return .bool(x)
        case let x as any BinaryInteger:
            guard let i = Int64(exactly: x) else { throw Realm.Error(.invalidValue, "\(x) does not fit a 64-bit integer") }
            return .int(i)
        case let x as Float: return .float(x)
        case let x as Double: return .double(x)
        case let x as Data: return .binary([UInt8](x))
        case let x as Date: return try x._rlmEncode(nil).value
        case let x as ObjectId: return .objectId(x.bytes)
        case let x as UUID: return .uuid(x)
        case let x as Decimal128: return .decimal128(low: x.low, high: x.high)
        case let x as any _RealmValue: return try x._rlmEncode(nil).value
        default: throw Realm.Error(.invalidValue, "a value of type \(type(of: v)) cannot be a query argument")
        }
    }

    static func rangeBounds(_ r: any RangeExpression) throws -> [StorageValue]? {
        func bounds<R: RangeExpression>(_ r: R) throws -> [StorageValue]? {
            if let c = r as? ClosedRange<R.Bound> { return [try scalar(c.lowerBound), try scalar(c.upperBound)] }
            return nil
        }
        return try bounds(r)
    }
}
