import ArgumentParser
import MoonreelEngine

struct Snapshot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write frames of a media file as PNG, JPEG or WebP, upright, exactly at their times.",
        discussion: """
            One frame: --at 62.5 (or a timecode: 1:02.5, 00:01:02.5). A contact sheet: --count 12 spreads 12 \
            frames evenly over the video, --every 10 takes one every 10 s from the start; --grid 4x3 lays them \
            out (default: a near-square grid), each tile with its time, gaps between. A sheet's size is \
            --sheet-width (the whole sheet) or --width (each tile; 320 by default); one frame's is --width.
            """)
    @Argument(help: "A media file.", completion: .file()) var file: String
    @Option(help: "Time of the frame: seconds or [[hh:]mm:]ss[.ff].") var at: String?
    @Option(help: "A contact sheet of this many frames, spread evenly over the video.") var count: Int?
    @Option(help: "A contact sheet of a frame every this many seconds from the start.") var every: String?
    @Option(help: "Columns x rows of the contact sheet, e.g. 4x3 (default: near square).") var grid: String?
    @Option(help: "Width in pixels (scaled down, aspect kept): the frame's, or each tile's of a sheet.") var width: Int?
    @Option(help: "Width in pixels of the whole contact sheet (tiles, gaps and all).") var sheetWidth: Int?
    @Option(name: .shortAndLong, help: "Image file to write (.png, .jpg or .webp).") var output: String = "frame.png"
    @Flag(help: "Replace the image file if it exists.") var overwrite = false

    func validate() throws {
        let sheets = [every, count.map(String.init)].compactMap { $0 }.count
        guard (at == nil) != (sheets == 0), sheets <= 1 else {
            throw ValidationError("give one of --at (one frame), --count N or --every SECONDS (a contact sheet)")
        }
        if at != nil, grid != nil || sheetWidth != nil { throw ValidationError("--grid and --sheet-width are for contact sheets (--count or --every)") }
        if let count, !(1...400).contains(count) { throw ValidationError("--count must be 1…400 frames, got \(count)") }
        if width != nil, sheetWidth != nil { throw ValidationError("give --width (each tile) or --sheet-width (the whole sheet), not both") }
        if let width, !(16...16384).contains(width) { throw ValidationError("--width must be 16…16384 pixels, got \(width)") }
        if let sheetWidth, !(64...16384).contains(sheetWidth) { throw ValidationError("--sheet-width must be 64…16384 pixels, got \(sheetWidth)") }
    }

    /// The times of a contact sheet's frames: `count` spread evenly (each at the middle of
    /// its share of the video, so neither the black first frame nor the last is favoured), or
    /// one every `every` from the start; more than `limit` (the grid's tiles, or 400) is
    /// refused, not cut: a sheet cut short would show only the video's start.
    static func sheetTimes(duration: MediaTime, count: Int?, every: MediaTime?, limit: Int, grid: String?) throws -> [MediaTime] {
        let holder = grid.map { "a \($0) grid holds \(limit)" } ?? "a sheet holds at most \(limit)"
        if let count {
            guard count <= limit else { throw ValidationError("--count \(count) frames: \(holder); give --count \(limit) or a larger --grid") }
            return (0..<count).compactMap { MediaTime(seconds: duration.seconds * (Double($0) + 0.5) / Double(count)) }
        }
        guard let every else { return [] }
        var times: [MediaTime] = [], time = MediaTime.zero
        while time < duration {
            guard times.count < limit else {
                let fitting = (duration.seconds / Double(limit) * 10).rounded(.up) / 10
                throw ValidationError("--every \(every.seconds) s over the video's \(CueCheck.clock(duration)) is more than \(limit) frames: \(holder); "
                                      + "give --every \(fitting) or more\(grid == nil ? "" : ", or a larger --grid")")
            }
            times.append(time)
            time = time + every
        }
        return times
    }

    /// Seconds or a timecode, as an exact time.
    static func time(_ text: String, option: String) throws -> MediaTime {
        guard let time = Double(text).flatMap({ MediaTime(seconds: $0) }) ?? CueReader.parseTime(text), time >= .zero else {
            throw ValidationError("\(option) must be seconds or a timecode like 1:02.5, got \(text.quotedForMessage())")
        }
        return time
    }

    func run() throws {
        FFmpegLog.capture()
        let grid = try self.grid.map { text -> (columns: Int, rows: Int) in
            let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, (1...20).contains(parts[0]), (1...20).contains(parts[1]) else {
                throw ValidationError("--grid must be COLUMNSxROWS (1…20 each), e.g. 4x3, got \(text.quotedForMessage())")
            }
            return (parts[0], parts[1])
        }
        let step = try every.map { text -> MediaTime in
            let step = try Self.time(text, option: "--every")
            guard step > .zero else { throw ValidationError("--every must be above 0") }
            return step
        }
        let at = try self.at.map { try Self.time($0, option: "--at") }
        do {
            let asset = try Asset(path: file)
            let composition = Composition()
            try composition.insertTimeRange(TimeRange(start: .zero, duration: asset.duration), of: asset, at: .zero)
            guard !composition.tracks(withMediaType: .video).isEmpty else { throw EngineError("input \"\(file)\" has no video track", kind: .notFound) }
            let generator = ImageGenerator(composition: composition)
            generator.overwrite = overwrite
            let readFiles = InputRegistry()
            readFiles.record(file)
            if let at {
                if let width {
                    let image = try generator.image(at: at, width: width)
                    try ImageGenerator.write(image, to: output, overwrite: overwrite, readFiles: readFiles)
                    print("\(output) (\(image.width)×\(image.height), \(at.seconds) s)")
                } else {
                    let size = try generator.copyImage(at: at, to: output)
                    print("\(output) (\(size.width)×\(size.height), \(at.seconds) s)")
                }
            } else {
                let times = try Self.sheetTimes(duration: composition.duration, count: count, every: step,
                                                limit: grid.map { $0.columns * $0.rows } ?? 400, grid: self.grid)
                let columns = grid?.columns ?? Int(Double(times.count).squareRoot().rounded(.up))
                let gap = 8
                // --sheet-width: the tiles share what the gaps leave, each at least 16 px wide.
                let across = min(columns, times.count), narrowest = 16
                if let sheetWidth, across * narrowest + gap * (across + 1) > sheetWidth {
                    throw ValidationError("--sheet-width \(sheetWidth) is too narrow for \(across) columns of frames at least \(narrowest) px wide; give --sheet-width \(across * narrowest + gap * (across + 1)) or more, or fewer columns (--grid, --count)")
                }
                let tileWidth = sheetWidth.map { ($0 - gap * (across + 1)) / across } ?? width ?? 320
                let tiles = try times.map { try generator.image(at: $0, width: tileWidth) }
                let image = try ContactSheet.make(tiles, labels: times.map(CueCheck.clock), columns: columns, gap: gap, width: sheetWidth)
                try ImageGenerator.write(image, to: output, overwrite: overwrite, readFiles: readFiles)
                let spacing = step.map { "every \($0.seconds) s" } ?? "spread over \(CueCheck.clock(composition.duration))"
                print("\(output) (\(image.width)×\(image.height), \(tiles.count) frames \(spacing))")
            }
        } catch let error as ValidationError {
            throw error
        } catch {
            printError("moonreel: \(error)")
            throw ExitCode(Exit.failed)
        }
    }
}
