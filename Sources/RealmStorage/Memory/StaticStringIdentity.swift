/// A number naming the text of a static string for the life of the process: its address (or,
/// for a one-scalar literal, the scalar). Two literals with different text never share one; the
/// same text may have more than one (literals are not always merged), so a caller must treat a
/// mismatch as "unknown", never as "different".
@inlinable package func staticStringIdentity(_ string: StaticString) -> Int {
    string.hasPointerRepresentation ? Int(bitPattern: string.utf8Start) : Int(string.unicodeScalar.value)
}
