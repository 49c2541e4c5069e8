/// Decimal128 from text: the parser behind `init(string:)` and the literals.
extension Decimal128 {
    // MARK: - Parsing

    static func isDigit(_ char: UInt8) -> Bool {
        char >= UInt8(ascii: "0") && char <= UInt8(ascii: "9")
    }

    static func parse(_ string: String) -> Decimal128? {
        let chars = Array(string.utf8)
        var index = 0
        var negative = false
        if index < chars.count && (chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-")) {
            negative = chars[index] == UInt8(ascii: "-")
            index += 1
        }
        let word = String(decoding: chars[index...], as: UTF8.self).lowercased()
        switch word {
        case "nan": return .nan
        case "snan": return Decimal128(low: 0, high: signalingNaNHigh)
        case "inf", "infinity": return infinity(negative: negative)
        default: break
        }

        // Keep at most 76 significant digits (10^76 fits in 256 bits); later ones only matter for rounding.
        let maxKept = 76
        var coefficient = WideUInt(0)
        var kept = 0
        var dropped = 0
        var sticky = false
        var fractionDigits = 0
        var sawDigit = false
        var sawPoint = false
        while index < chars.count {
            let char = chars[index]
            if isDigit(char) {
                sawDigit = true
                let digit = char - UInt8(ascii: "0")
                if sawPoint {
                    fractionDigits += 1
                }
                if kept < maxKept {
                    if kept > 0 || digit != 0 {
                        coefficient = coefficient.multiplied(by: 10).adding(WideUInt(UInt128(digit)))
                        kept += 1
                    }
                } else {
                    dropped += 1
                    sticky = sticky || digit != 0
                }
            } else if char == UInt8(ascii: ".") && !sawPoint {
                sawPoint = true
            } else if char == UInt8(ascii: "e") || char == UInt8(ascii: "E") {
                break
            } else {
                return nil
            }
            index += 1
        }
        guard sawDigit else { return nil }

        var exponent = 0
        if index < chars.count {
            index += 1  // skip "e"
            var exponentNegative = false
            if index < chars.count && (chars[index] == UInt8(ascii: "+") || chars[index] == UInt8(ascii: "-")) {
                exponentNegative = chars[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < chars.count else { return nil }
            while index < chars.count {
                let char = chars[index]
                guard isDigit(char) else { return nil }
                // Saturate: anything this large over- or underflows anyway.
                exponent = Swift.min(exponent * 10 + Int(char - UInt8(ascii: "0")), 1_000_000_000)
                index += 1
            }
            if exponentNegative {
                exponent = -exponent
            }
        }
        return rounded(negative: negative, coefficient: coefficient, exponent: exponent - fractionDigits + dropped, sticky: sticky)
    }
}
