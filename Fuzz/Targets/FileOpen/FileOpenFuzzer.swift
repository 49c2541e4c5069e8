import RealmFuzzHarness

/// libFuzzer's entry point for the `FileOpen` target (the body is `FuzzHarness.fileOpen`, which
/// `swift test` also runs over Fuzz/Corpus/FileOpen/).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: OpaquePointer?, _ size: Int) -> Int32 {
    FuzzHarness.fileOpen(FuzzHarness.input(data, size))
    return 0
}
