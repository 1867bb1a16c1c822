/// One libFuzzer executable for every target: `FUZZ_TARGET` (TimedText, LuaValues, Media, Library, Studio or Timeline)
/// picks the function each input goes to. SwiftPM names an executable's entry
/// `<Target>_main` and points `main` at it, so libFuzzer's own `main` is not linked; this
/// entry starts libFuzzer's driver instead.
import Glibc

let targets: [String: FuzzTarget] = ["TimedText": fuzzTimedText, "LuaValues": fuzzLuaValues, "Media": fuzzMedia, "Library": fuzzLibrary,
                                     "Studio": fuzzStudio, "Timeline": fuzzTimeline]

typealias FuzzTarget = @Sendable (UnsafePointer<UInt8>, Int) -> Int32

nonisolated(unsafe) var selected: FuzzTarget?

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                                 _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                                 _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, let selected else { return 0 }
    return selected(data, size)
}

@_cdecl("MoonreelFuzz_main")
func entry(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    let name = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = targets[name] else {
        print("set FUZZ_TARGET to one of: \(targets.keys.sorted().joined(separator: ", "))")
        return 2
    }
    selected = target
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { testOneInput($0, $1) }
}
