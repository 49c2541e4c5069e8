import RealmQuery
import Testing

/// The marker tests put in query text where they expect an error; it is removed before parsing.
let caret: Character = "‸"

/// `text` without its caret marker, and the marker's offset in Unicode scalars (nil without one).
func splitCaret(_ text: String) -> (text: String, offset: Int?) {
    guard let i = text.firstIndex(of: caret) else { return (text, nil) }
    var clean = text
    clean.remove(at: i)
    return (clean, text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: i))
}

/// An expected error: code and (from the caret marker) offset.
struct ErrorCase: CustomTestStringConvertible, Sendable {
    var marked: String
    var arguments: [QueryArgument]
    var code: QueryError.Code
    var table: String

    init(_ marked: String, _ code: QueryError.Code, _ arguments: [QueryArgument] = [], table: String = "Person") {
        self.marked = marked
        self.code = code
        self.arguments = arguments
        self.table = table
    }

    var testDescription: String { "\(marked) → \(code)" }

    /// Checks that `run` throws this case's code at its marked offset, with the text attached.
    func check(_ run: (String, [QueryArgument]) throws(QueryError) -> Void) {
        let (text, offset) = splitCaret(marked)
        do {
            try run(text, arguments)
            Issue.record("expected \(code) for \(marked)")
        } catch {
            #expect(error.code == code, "\(error)")
            #expect(error.offset == offset, "\(error)")
            #expect(error.text == text)
            #expect(!error.message.isEmpty)
        }
    }
}
