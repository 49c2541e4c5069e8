import RealmFuzzHarness

/// libFuzzer's entry point for the `Predicate` target (the body is `FuzzHarness.predicate`, which
/// `swift test` also runs over Fuzz/Corpus/Predicate/).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: OpaquePointer?, _ size: Int) -> Int32 {
    FuzzHarness.predicate(FuzzHarness.input(data, size))
    return 0
}
