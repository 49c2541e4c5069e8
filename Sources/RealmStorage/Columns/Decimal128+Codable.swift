/// Decimal128 as a `Codable` value (its canonical text).
extension Decimal128 {
    // MARK: - Codable

    /// Decodes a decimal from a string (preferred), an integer or a floating-point number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            guard let value = Decimal128.parse(string) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "Invalid Decimal128 string '\(string)'")
            }
            self = value
        } else if let integer = try? container.decode(Int64.self) {
            self.init(integer)
        } else {
            self.init(try container.decode(Double.self))
        }
    }

    /// Encodes the decimal as its ``stringValue``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}
