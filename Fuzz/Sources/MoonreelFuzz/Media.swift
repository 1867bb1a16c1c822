import Foundation
import MoonreelEngine

/// Damaged media files: the input is written to a file (the first byte picks its extension),
/// read as a layer's picture when it is one, opened as an asset, and, if it has a picture,
/// composed into frames at two times.
/// Errors are fine; a crash, a hang or a leak is a finding. FFmpeg itself is not
/// instrumented, so this finds mistakes in how Moonreel uses what FFmpeg reports.
func fuzzMedia(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let extensions = ["mp4", "mov", "mkv", "png", "jpg", "webp", "m4a", "wav"]
    let path = MediaFile.folder + "/input." + extensions[Int(data[0]) % extensions.count]
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes: data + 1, count: size - 1)) else { return 0 }
    // Pictures for layers, their colour profile converted as they are read.
    if ["png", "jpg", "webp"].contains(where: path.hasSuffix) { _ = try? ImageLoader.load(path) }
    guard let asset = try? Asset(path: path) else { return 0 }
    let composition = Composition()
    let length = min(asset.duration, MediaTime(value: 1, timescale: 1))
    guard length.value > 0,
          (try? composition.insertTimeRange(TimeRange(start: .zero, duration: length), of: asset, at: .zero)) != nil,
          !composition.tracks(withMediaType: .video).isEmpty else { return 0 }
    let generator = ImageGenerator(composition: composition)
    _ = try? generator.image(at: .zero)
    _ = try? generator.image(at: MediaTime(value: length.value / 2, timescale: length.timescale))
    return 0
}

enum MediaFile {
    static let folder: String = {
        let folder = NSTemporaryDirectory() + "moonreel-fuzz-media-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "moonreel-fuzz-media-\(getpid())") }
        return folder
    }()
}
