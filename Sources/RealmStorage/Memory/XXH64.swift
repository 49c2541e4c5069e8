/// XXH64, the 64-bit xxHash, used as the checksum of every block (Spec/FORMAT.md §2.3).
package enum XXH64 {
    static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    @inline(__always) static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }
    @inline(__always) static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }
    @inline(__always) static func merge(_ acc: UInt64, _ v: UInt64) -> UInt64 {
        (acc ^ round(0, v)) &* p1 &+ p4
    }

    /// Hashes an array of bytes.
    package static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    static func hash(_ buf: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        let len = buf.count
        guard let p = buf.baseAddress, len > 0 else { return avalanche(seed &+ p5) }
        @inline(__always) func r64(_ o: Int) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
        @inline(__always) func r32(_ o: Int) -> UInt64 { UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self))) }
        var i = 0
        var h: UInt64
        if len >= 32 {
            var v1 = seed &+ p1 &+ p2
            var v2 = seed &+ p2
            var v3 = seed
            var v4 = seed &- p1
            while i + 32 <= len {
                v1 = round(v1, r64(i))
                v2 = round(v2, r64(i + 8))
                v3 = round(v3, r64(i + 16))
                v4 = round(v4, r64(i + 24))
                i += 32
            }
            h = converge(v1, v2, v3, v4)
        } else {
            h = seed &+ p5
        }
        return avalanche(tail(h &+ UInt64(len), p, from: i, to: len))
    }

    /// Merges the four stripe accumulators.
    @inline(__always) static func converge(_ v1: UInt64, _ v2: UInt64, _ v3: UInt64, _ v4: UInt64) -> UInt64 {
        var h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
        h = merge(h, v1)
        h = merge(h, v2)
        h = merge(h, v3)
        return merge(h, v4)
    }

    /// Folds the bytes `i..<len` that did not fill a stripe into `h`.
    @inline(__always) static func tail(_ hash: UInt64, _ p: UnsafeRawPointer, from start: Int, to len: Int) -> UInt64 {
        @inline(__always) func r64(_ o: Int) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
        @inline(__always) func r32(_ o: Int) -> UInt64 { UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt32.self))) }
        var h = hash
        var i = start
        while i + 8 <= len {
            h ^= round(0, r64(i))
            h = rotl(h, 27) &* p1 &+ p4
            i += 8
        }
        if i + 4 <= len {
            h ^= r32(i) &* p1
            h = rotl(h, 23) &* p2 &+ p3
            i += 4
        }
        while i < len {
            h ^= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) &* p5
            h = rotl(h, 11) &* p1
            i += 1
        }
        return h
    }

    @inline(__always) static func avalanche(_ x: UInt64) -> UInt64 {
        var h = x
        h ^= h >> 33
        h &*= p2
        h ^= h >> 29
        h &*= p3
        h ^= h >> 32
        return h
    }
}

extension XXH64 {
    /// Incremental XXH64 over bytes fed in pieces; equals `hash` of their concatenation.
    package struct Streaming: Sendable {
        var v1: UInt64, v2: UInt64, v3: UInt64, v4: UInt64
        let seed: UInt64
        var buffer: [UInt8] = []
        var total = 0

        package init(seed: UInt64 = 0) {
            self.seed = seed
            v1 = seed &+ p1 &+ p2
            v2 = seed &+ p2
            v3 = seed
            v4 = seed &- p1
            buffer.reserveCapacity(32)
        }

        package mutating func update(_ bytes: [UInt8]) { update(bytes[...]) }

        package mutating func update(_ bytes: ArraySlice<UInt8>) {
            bytes.withUnsafeBytes { update($0) }
        }

        private mutating func update(_ raw: UnsafeRawBufferPointer) {
            total += raw.count
            var i = 0
            if !buffer.isEmpty {
                let take = min(32 - buffer.count, raw.count)
                buffer += raw[0..<take]
                i = take
                if buffer.count == 32 {
                    buffer.withUnsafeBytes { stripe($0.baseAddress!) }
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            if let p = raw.baseAddress {
                while i + 32 <= raw.count {
                    stripe(p + i)
                    i += 32
                }
            }
            if i < raw.count { buffer += raw[i...] }
        }

        private mutating func stripe(_ p: UnsafeRawPointer) {
            @inline(__always) func r64(_ o: Int) -> UInt64 { UInt64(littleEndian: p.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
            v1 = round(v1, r64(0))
            v2 = round(v2, r64(8))
            v3 = round(v3, r64(16))
            v4 = round(v4, r64(24))
        }

        package func finalize() -> UInt64 {
            let h = total >= 32 ? converge(v1, v2, v3, v4) : seed &+ p5
            return buffer.withUnsafeBytes { raw in
                avalanche(raw.baseAddress.map { tail(h &+ UInt64(total), $0, from: 0, to: raw.count) } ?? h &+ UInt64(total))
            }
        }
    }
}
