import RealmFuzzHarness

/// libFuzzer's entry point for the `SegmentDecode` target (the body is `FuzzHarness.segmentDecode`, which
/// `swift test` also runs over Fuzz/Corpus/SegmentDecode/).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: OpaquePointer?, _ size: Int) -> Int32 {
    FuzzHarness.segmentDecode(FuzzHarness.input(data, size))
    return 0
}
