import Testing

@testable import RealmStorage

/// The sole-reference check (reference-count word compared, runtime asked otherwise) says what
/// Swift's runtime says, for every kind of other reference, and recognizes the word here.
@Suite struct SoleReferenceTests {
    final class Target {}

    final class Unowning {
        unowned let target: Target
        init(_ target: Target) { self.target = target }
    }

    final class Weakly {
        weak var target: Target?
        init(_ target: Target) { self.target = target }
    }

    /// Both checks on `reference`, which must agree.
    private func sole(_ reference: inout Target?) -> Bool {
        let byWord = isSolelyReferenced(&reference, by: .shared)
        let byRuntime = isSolelyReferenced(&reference, by: .runtimeOnly)
        #expect(byWord == byRuntime)
        return byWord
    }

    @Test func theProbeRecognizesTheWordOnThisPlatform() {
        #if _pointerBitWidth(_64)
            #expect(SoleReferenceCheck.shared.comparesWords)
        #endif
        #expect(!SoleReferenceCheck.runtimeOnly.comparesWords)
    }

    @Test func everyOtherReferenceCounts() {
        var reference: Target? = Target()
        #expect(sole(&reference))

        var others: [Target] = [reference!]
        #expect(!sole(&reference))
        others.removeAll()
        #expect(sole(&reference))

        var unowning: Unowning? = Unowning(reference!)
        #expect(!sole(&reference))
        withExtendedLifetime(unowning) {}
        unowning = nil
        #expect(sole(&reference))

        var weakly: Weakly? = Weakly(reference!)
        #expect(!sole(&reference))
        #expect(weakly?.target === reference)
        weakly = nil
        // The counts stay in the runtime's side table: the word no longer matches, the runtime
        // answers.
        #expect(sole(&reference))

        var none: Target? = nil
        #expect(!sole(&none))
        #expect(others.isEmpty)
    }
}
