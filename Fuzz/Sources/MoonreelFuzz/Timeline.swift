import Foundation
import MoonreelEngine
import MoonreelInterchange

/// A timeline file from a stranger (a shared .otio or an editor's .fcpxml): the first byte
/// picks the format, the rest is the file. Reading it must end in a timeline or a thrown
/// error — never a crash, a hang or a trap on times, rates or nesting of any size — and a
/// timeline read must write again in every format.
func fuzzTimeline(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let format = bytes[0] % 2 == 0 ? "otio" : "fcpxml"
    let file = TimelineFuzzFiles.folder + "/input." + format
    FileManager.default.createFile(atPath: file, contents: Data(bytes.dropFirst()))
    guard let (timeline, _) = try? TimelineFile.read(file) else { return 0 }
    for output in TimelineFormat.allCases {
        let path = TimelineFuzzFiles.folder + "/output." + output.rawValue
        try? TimelineFile.write(timeline, to: path, overwrite: true) { _ in }
    }
    return 0
}

enum TimelineFuzzFiles {
    static let folder: String = {
        let folder = NSTemporaryDirectory() + "moonreel-fuzz-timeline-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }()
}
