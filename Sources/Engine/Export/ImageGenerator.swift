import CMoonFFmpeg
import MoonreelComposition
import MoonreelMedia
import MoonreelRender

/// Renders single composed frames to PNG, JPEG or WebP files, like `AVAssetImageGenerator` with zero
/// tolerance: the frame at exactly the requested time, through the same renderer as export.
public final class ImageGenerator {
    /// The composition frames are taken from (AVAssetImageGenerator's `asset`).
    public let composition: Composition
    /// Frozen into a render plan at the first `copyImage`; setting another one starts afresh.
    public var videoComposition: VideoComposition? { didSet { (compositor, diagnosticsChecked) = (nil, false) } }
    /// Whether `copyImage` may replace an existing file (never one of the inputs).
    public var overwrite = false
    /// Files that no image may replace, overwrite or not (see `InputRegistry`).
    public var readFiles: InputRegistry?
    private var compositor: Compositor?
    private var diagnosticsChecked = false

    /// A generator for `composition`, like `AVAssetImageGenerator(asset:)` with zero tolerance.
    /// `videoComposition` nil: each video track upright at the sources' size, as
    /// `VideoComposition.properties(of:)` makes it.
    public init(composition: Composition, videoComposition: VideoComposition? = nil) {
        self.composition = composition
        self.videoComposition = videoComposition
    }

    /// Writes the composed frame at `time` at the render size, in the format the file
    /// name's extension names. An existing file is replaced only when `overwrite` is set.
    /// Returns the image's size.
    @discardableResult
    public func copyImage(at time: MediaTime, to path: String) throws -> (width: Int, height: Int) {
        let format = try StillImageFormat(forPath: path)
        guard time >= .zero, time < composition.duration else {
            throw EngineError("time \(time.seconds) s is outside the composition (0…\(composition.duration.seconds) s)")
        }
        let output = try SafeOutput(path: path, overwrite: overwrite, inputs: composition.sourcePaths, readFiles: readFiles)
        defer { output.discard() }
        let frame = try currentCompositor().frame(at: time)
        try StillImageWriter.write(frame, as: format, to: output.temporaryPath)
        try output.commit()
        return (frame.width, frame.height)
    }

    /// The composed frame at `time` as pixels in memory (AVAssetImageGenerator's
    /// `copyCGImage(at:actualTime:)`), e.g. for layer contents; the time is exact.
    /// With `width` (smaller than the render width), the picture is scaled down to it, its
    /// aspect kept: thumbnails.
    public func image(at time: MediaTime, width: Int? = nil) throws -> RGBAImage {
        guard time >= .zero, time < composition.duration else {
            throw EngineError("time \(time.seconds) s is outside the composition (0…\(composition.duration.seconds) s)")
        }
        return try currentCompositor().image(at: time, width: width)
    }

    /// Writes pixels in memory (an `image(at:)` result) as a PNG, JPEG or WebP file.
    public static func write(_ image: RGBAImage, to path: String, overwrite: Bool, readFiles: InputRegistry? = nil) throws {
        let format = try StillImageFormat(forPath: path)
        let output = try SafeOutput(path: path, overwrite: overwrite, inputs: [], readFiles: readFiles)
        defer { output.discard() }
        let frame = try Frame(width: image.width, height: image.height, format: AV_PIX_FMT_BGRA)
        let (pixels, stride) = frame.plane(0)
        for y in 0..<image.height { (pixels + y * stride).update(from: image.row(y), count: image.width * 4) }
        frame.pointer.pointee.color_range = AVCOL_RANGE_JPEG
        try StillImageWriter.write(frame, as: format, to: output.temporaryPath)
        try output.commit()
    }

    /// What its pictures show other than asked, as an export would say it (a photo whose
    /// colour profile is not read, a render size rounded to whole pixels, text cut to fit or
    /// running past its layer, glyphs no font has): checked once per video composition, so
    /// the first call after one is set (or the first of all) returns them and later ones nothing.
    public func newDiagnostics() throws -> [Diagnostic] {
        guard !diagnosticsChecked else { return [] }
        diagnosticsChecked = true
        let photos = composition.photoProfileDiagnostics()
        guard let videoComposition else { return photos }
        let scaled = try videoComposition.scaledRenderSize()
        let rounded = scaled.roundingNote(to: scaled.pixels(sides: .whole), sides: .whole)
        return try photos + (rounded.map { [$0] } ?? []) + videoComposition.textDiagnostics(shownUntil: composition.duration)
    }

    /// The render core at the render size times `renderScale`, made at first use.
    private func currentCompositor() throws -> Compositor {
        if let compositor { return compositor }
        let videoComposition = self.videoComposition ?? VideoComposition.properties(of: composition)
        let (width, height) = try videoComposition.scaledRenderSize().pixels(sides: .whole)
        let plan = try VideoPlan.make(composition: composition, videoComposition: videoComposition,
                                      range: TimeRange(start: .zero, duration: composition.duration),
                                      outputWidth: width, outputHeight: height)
        let made = Compositor(video: plan, audio: nil, range: TimeRange(start: .zero, duration: composition.duration))
        compositor = made
        return made
    }
}

extension Composition {
    /// What the colour profiles of photos shown as video cost them (`ImageLoader.profileDiagnostic`:
    /// one not read, colours outside sRGB), for an export and an image generator alike. A photo
    /// that cannot be read is left to the reading, which says why.
    func photoProfileDiagnostics() -> [Diagnostic] {
        let photos = Set(tracks(withMediaType: .video).flatMap { $0.segments.compactMap { $0.source?.isStillImage == true ? $0.source?.path : nil } })
        return photos.sorted().compactMap { try? ImageLoader.profileDiagnostic($0) }
    }
}
