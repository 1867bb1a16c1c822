import Foundation
import MoonreelEngine

/// The timeline formats Moonreel writes, and reads (OTIO and FCPXML).
public enum TimelineFormat: String, Sendable, CaseIterable {
    /// OpenTimelineIO JSON: every track, transitions, speed, markers, ramps as effects.
    case otio
    /// Final Cut Pro XML 1.10 (Final Cut Pro, DaVinci Resolve).
    case fcpxml
    /// CMX 3600: one video track, timecode in whole frames (Premiere, Resolve, Avid).
    case edl

    /// The format a file name's extension names (.otio, .fcpxml, .edl), or nil.
    public init?(path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), let format = TimelineFormat(rawValue: name[name.index(after: dot)...].lowercased()) else { return nil }
        self = format
    }
}

/// Writing a timeline to a file (through a temporary file beside it, never over an input)
/// and reading one into the model.
public enum TimelineFile {
    /// Writes `timeline` to `path` as `format` (from the extension when nil), with media
    /// paths absolute (file:// URLs) or relative to the timeline file's folder.
    /// `approve` is given what the format leaves out or rounds, one diagnostic each, before
    /// the file is put in place: throwing there (strict) leaves nothing behind.
    public static func write(_ timeline: Timeline, to path: String, format: TimelineFormat? = nil, relativePaths: Bool = false,
                             overwrite: Bool = false, readFiles: InputRegistry? = nil, approve: ([Diagnostic]) throws -> Void) throws {
        guard let format = format ?? TimelineFormat(path: path) else {
            throw EngineError("\(path.quotedForMessage()): name the format with the extension .otio, .fcpxml or .edl", kind: .invalidArgument, remedy: .nameTimelineFormat)
        }
        let folder = absolutePath(path).split(separator: "/").dropLast().joined(separator: "/")
        let reference = { (media: String) -> String in
            let absolute = absolutePath(media)
            if relativePaths { return relative(absolute, to: "/" + folder) }
            return URL(fileURLWithPath: absolute).absoluteString
        }
        let (text, notes): (String, [Diagnostic]) = switch format {
        case .otio: (try OpenTimelineIO.encode(timeline, path: reference), [])
        case .fcpxml: FCPXML.encode(timeline, path: reference)
        case .edl: EDL.encode(timeline, path: reference)
        }
        let inputs = timeline.tracks.flatMap { $0.clips.map(\.path) }
        let output = try SafeOutput(path: path, overwrite: overwrite, inputs: inputs, readFiles: readFiles)
        defer { output.discard() }
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: output.temporaryPath)) } catch {
            throw EngineError("cannot write \(path.quotedForMessage()): \(error.localizedDescription)", kind: .io)
        }
        try approve(notes)
        try output.commit()
    }

    /// The timeline in the OTIO or FCPXML file at `path`; media paths relative to the
    /// file's folder are made absolute. What the model cannot hold is named in the notes.
    public static func read(_ path: String) throws -> (timeline: Timeline, notes: [Diagnostic]) {
        guard let format = TimelineFormat(path: path), format != .edl else {
            throw EngineError("\(path.quotedForMessage()): Moonreel reads .otio and .fcpxml timelines", kind: .unsupported)
        }
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw EngineError("cannot read \(path.quotedForMessage()): \(error.localizedDescription)", kind: .notFound)
        }
        let folder = absolutePath(path).split(separator: "/").dropLast().joined(separator: "/")
        let resolve = { (reference: String) -> String in
            if reference.hasPrefix("file:") { return URL(string: reference)?.path ?? String(reference.dropFirst(5)) }
            return reference.hasPrefix("/") ? reference : "/" + folder + "/" + reference
        }
        return format == .otio ? try OpenTimelineIO.decode(text, resolve: resolve) : try FCPXML.decode(text, resolve: resolve)
    }

    /// The file name without its folder and extension ("cut" for "out/cut.otio").
    public static func stem(of path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name.lastIndex(of: ".").map { String(name[..<$0]) } ?? name
    }

    /// `path` with "-N" before its extension ("cut-2.otio"), for the Nth of several timelines.
    public static func numbered(_ path: String, _ number: Int) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[slash...].lastIndex(of: "."), dot > slash else { return path + "-\(number)" }
        return path[..<dot] + "-\(number)" + path[dot...]
    }

    /// `path` from the root, "." and ".." taken out.
    static func absolutePath(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [Substring] = []
        for part in full.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `path` (absolute) as seen from the folder `base` (absolute).
    static func relative(_ path: String, to base: String) -> String {
        let target = path.split(separator: "/"), from = base.split(separator: "/")
        let shared = zip(target, from).prefix { $0 == $1 }.count
        return (Array(repeating: "..", count: from.count - shared) + target.dropFirst(shared).map(String.init)).joined(separator: "/")
    }
}
