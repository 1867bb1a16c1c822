#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import MoonreelPlatform
import MoonreelMedia

/// The names of an image sequence: `frames/%05d.png` → `frames/00001.png`, `00002.png`, …
/// numbered from 1, as ffmpeg writes and reads them. The file name holds exactly one frame
/// number (`%d` or `%0Nd`); `%%` is a literal `%`.
struct SequencePattern {
    let directory: String
    private let prefix: String
    private let suffix: String
    /// 0 for `%d`: no padding.
    let digits: Int

    init(path: String, directory: String, name: String) throws {
        self.directory = directory
        let wrong = EngineError("output \(path.quotedForMessage(limit: 200)): an image sequence's file name needs one frame number, "
                                + "such as frames/%05d.png (%% for a % sign)", subject: path)
        var parts: [String] = [""], number: Int? = nil
        var rest = Substring(name)
        while let character = rest.popFirst() {
            guard character == "%" else { parts[parts.count - 1].append(character); continue }
            if rest.first == "%" {
                rest.removeFirst()
                parts[parts.count - 1].append("%")
                continue
            }
            let width = rest.prefix { $0.isASCII && $0.isNumber }
            guard number == nil, rest.dropFirst(width.count).first == "d", width.isEmpty || (width.count == 2 && width.first == "0" && width.last != "0") else { throw wrong }
            number = Int(width) ?? 0
            rest = rest.dropFirst(width.count + 1)
            parts.append("")
        }
        guard let number else { throw wrong }
        (prefix, suffix, digits) = (parts[0], parts[1], number)
    }

    func name(_ number: Int) -> String {
        let text = String(number)
        return prefix + String(repeating: "0", count: max(digits - text.count, 0)) + text + suffix
    }

    func path(_ number: Int) -> String { "\(directory)/\(name(number))" }
}

/// An export to numbered image files, under the rule every output follows: frames are
/// written into a hidden folder beside them, checked, synced, and moved into place only
/// once all of them are there; no existing file is replaced unless `overwrite` (never an
/// input), and names are checked before any work. Only a failure while moving the files
/// (one appearing meanwhile) can leave part of a sequence in place.
final class ImageSequenceOutput: ExportOutput {
    let path: String
    /// The hidden folder the frames are written into.
    let temporaryPath: String
    let format: StillImageFormat
    let pattern: SequencePattern
    /// The most bytes all frames together may take (`fileLengthLimit`).
    var sizeLimit: Int64?
    private(set) var framesWritten = 0
    private(set) var bytesWritten: Int64 = 0
    private let overwrite: Bool
    private let inputs: [String]
    private let readFiles: InputRegistry?

    init(path: String, format: StillImageFormat, overwrite: Bool, inputs: [String], readFiles: InputRegistry?) throws {
        (self.path, self.format, self.overwrite, self.inputs, self.readFiles) = (path, format, overwrite, inputs, readFiles)
        let (directory, name) = try SafeOutput.checkedLocation(of: path)
        pattern = try SequencePattern(path: path, directory: directory, name: name)
        temporaryPath = SafeOutput.temporaryPath(in: directory, for: name.replacingAll("%", with: "_"), suffix: "tmp")
    }

    /// Checks the names of `frameCount` frames before anything is written: the numbers fit
    /// the pattern's digits (so names sort in order), and no file is in the way. Returns a
    /// note when files of an earlier, longer sequence will remain after the last frame.
    func checkNames(frameCount: Int64) throws -> String? {
        if pattern.digits > 0, String(frameCount).count > pattern.digits {
            throw EngineError("output \(path.quotedForMessage(limit: 200)): \(frameCount) frames need \(String(frameCount).count) digits; "
                              + "use %0\(String(frameCount).count)d so the names sort in order", subject: path)
        }
        for number in 1...max(Int(frameCount), 1) {
            try SafeOutput.checkReplaceable(pattern.path(number), overwrite: overwrite, inputs: inputs, readFiles: readFiles)
        }
        var info = stat()
        let next = pattern.path(Int(frameCount) + 1)
        return lstat(next, &info) == 0 ? "\(next) and any later frames of an earlier export were left as they are" : nil
    }

    /// Writes the next frame, or returns false (keeping nothing of it) when it would take
    /// the sequence past `sizeLimit`.
    func write(_ frame: Frame) throws -> Bool {
        if framesWritten == 0 {
            guard mkdir(temporaryPath, 0o755) == 0 else {
                throw EngineError("output \(path.quotedForMessage(limit: 200)): cannot create a folder for the frames (\(systemMessage(errno)))", kind: .io, subject: path)
            }
            PendingFiles.started(temporaryPath)
        }
        let file = "\(temporaryPath)/\(pattern.name(framesWritten + 1))"
        try StillImageWriter.write(frame, as: format, to: file)
        guard let size = fileSize(file) else { throw EngineError("output \(path.quotedForMessage(limit: 200)): a frame was not written", kind: .io, subject: path) }
        if let sizeLimit, bytesWritten + size > sizeLimit {
            unlink(file)
            return false
        }
        bytesWritten += size
        framesWritten += 1
        return true
    }

    /// Whether a frame of the average size so far would pass `sizeLimit`.
    var isAtSizeLimit: Bool {
        guard let sizeLimit, framesWritten > 0 else { return false }
        return bytesWritten + bytesWritten / Int64(framesWritten) > sizeLimit
    }

    /// The first frame, reopened: it must read as an image of the format.
    func verify() throws {
        guard framesWritten > 0 else { throw EngineError("no frame was written; the output was not replaced", kind: .encode) }
        let first = "\(temporaryPath)/\(pattern.name(1))"
        do {
            _ = try ImageLoader.pixelSize(of: first)
        } catch {
            throw EngineError("the first frame failed verification (\(error)); the output was not replaced", kind: .encode, underlying: error)
        }
    }

    func commit() throws {
        for number in stride(from: 1, through: framesWritten, by: 1) {
            try SafeOutput.place("\(temporaryPath)/\(pattern.name(number))", at: pattern.path(number), overwrite: overwrite,
                                 inputs: inputs, readFiles: readFiles)
        }
        discard()
        try? Paths.sync(folder: pattern.directory)
    }

    /// Removes the hidden folder and whatever frames are still in it.
    func discard() {
        Paths.removeFolder(temporaryPath)
        PendingFiles.finished(temporaryPath)
    }
}
