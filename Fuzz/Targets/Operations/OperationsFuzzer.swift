import RealmFuzzHarness

/// libFuzzer's entry point for the `Operations` target (the body is `FuzzHarness.operations`, which
/// `swift test` also runs over Fuzz/Corpus/Operations/).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: OpaquePointer?, _ size: Int) -> Int32 {
    FuzzHarness.operations(FuzzHarness.input(data, size))
    return 0
}
