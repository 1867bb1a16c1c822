import MoonreelPlatform
import Foundation
import Synchronization
import Testing
import TestSupport
@testable import MoonreelEngine
@testable import MoonreelRender

/// The render core: pictures and sound with no file, checked against the export that uses
/// it (decoded by the ffmpeg CLI) and against itself (random access against in order).
@Suite struct CompositorTests {
    /// Two 2-second clips cross-dissolving over all their length, the second fading in,
    /// with the first's sound ramped down: every pixel and sample depends on the time.
    static func dissolve() throws -> (Composition, VideoComposition, AudioMix) {
        let (composition, videoComposition, instruction, first) = try twoClipComposition()
        let range = instruction.timeRange
        let audio = try composition.addMutableTrack(mediaType: .audio)
        try audio.insertTimeRange(range, of: try #require(first.tracks(withMediaType: .audio).first), at: .zero)
        let top = LayerInstruction(trackID: composition.tracks[1].trackID)
        top.opacity.ramp(from: 0, to: 1, over: range, curve: .linear)
        instruction.layerInstructions = [top, LayerInstruction(trackID: composition.tracks[0].trackID)]
        let parameters = AudioMixInputParameters(trackID: audio.trackID)
        parameters.setVolumeRamp(from: 1, to: 0.2, over: range)
        return (composition, videoComposition, AudioMix(inputParameters: [parameters]))
    }

    /// A frame rendered in order on the stream's thread is the frame rendered alone at its
    /// time, byte for byte (a preview that seeks shows what an export writes in sequence).
    @Test func framesInOrderAreTheFramesAtTheirTimes() throws {
        let (composition, videoComposition, _) = try Self.dissolve()
        let sequence = try Compositor(composition: composition, videoComposition: videoComposition)
        let random = try Compositor(composition: composition, videoComposition: videoComposition)
        let stream = try sequence.frameStream(cancellation: CancellationFlag())
        defer { stream.stop() }
        var number: Int64 = 0
        while let frame = try stream.next() {
            #expect(frame.pointer.pointee.pts == number)
            if [0, 7, 31, 59].contains(number) {
                let alone = try random.frame(at: sequence.frameDuration * number)
                for plane in 0..<3 {
                    #expect(DissolveTests.samples(frame, plane: plane) == DissolveTests.samples(alone, plane: plane), "frame \(number) plane \(plane)")
                }
            }
            number += 1
        }
        #expect(number == 60)
    }

    /// A stream of three items whose producer counts the items it has started.
    final class CountedStream: Sendable {
        let started = Atomic<Int>(0)

        func start(_ lead: RenderStream<Int>.Lead) throws -> RenderStream<Int> {
            try RenderStream<Int>(lead: lead) { [self] push in
                for item in 0..<3 {
                    started.add(1, ordering: .sequentiallyConsistent)
                    guard push(item) else { return }
                }
            }
        }

        /// How many items the producer has started once it reached `count` and had 100 ms
        /// more to go further (waiting for the first `count` however busy the machine is).
        func startedAfterReaching(_ count: Int) -> Int {
            let deadline = Date().addingTimeInterval(30)
            while started.load(ordering: .sequentiallyConsistent) < count, Date() < deadline { usleep(1_000) }
            usleep(100_000)
            return started.load(ordering: .sequentiallyConsistent)
        }
    }

    /// The frame stream hands each picture over: the renderer starts the next one only once
    /// the consumer has taken the last, so it holds one picture ahead of the encoder, not two.
    @Test func aHandOverWaitsForTheConsumer() throws {
        let counted = CountedStream()
        let stream = try counted.start(.queued(0))
        defer { stream.stop() }
        #expect(counted.startedAfterReaching(1) == 1)   // the first waits to be taken
        #expect(try stream.next() == 0)
        #expect(counted.startedAfterReaching(2) == 2)
        #expect(try stream.next() == 1 && stream.next() == 2 && stream.next() == nil)
    }

    /// Where the encoder is the work, the renderer starts the next picture only when the
    /// consumer asks for it (done with the last): no second picture is drawn meanwhile.
    @Test func onDemandTheNextWaitsToBeAskedFor() throws {
        let counted = CountedStream()
        let stream = try counted.start(.onRequest)
        defer { stream.stop() }
        #expect(counted.startedAfterReaching(1) == 1)
        #expect(try stream.next() == 0)
        #expect(counted.startedAfterReaching(1) == 1)   // not started while the consumer holds 0
        #expect(try stream.next() == 1)
        #expect(counted.startedAfterReaching(2) == 2)
        #expect(try stream.next() == 2 && stream.next() == nil && stream.next() == nil)
    }

    /// A consumer that stops while the producer waits to be asked ends the stream.
    @Test func stoppingAnOnDemandStreamEndsTheProducer() throws {
        let counted = CountedStream()
        let stream = try counted.start(.onRequest)
        #expect(try stream.next() == 0)
        stream.stop()
        #expect(counted.started.load(ordering: .sequentiallyConsistent) == 1)
    }

    /// The preview picture is the exported one: an export to PNG files (the same render
    /// core, then the image writer), read back with ffmpeg, matches `image(at:)` to within
    /// the rounding of two RGB conversions.
    @Test func picturesAreTheExportsPictures() throws {
        let (composition, videoComposition, _) = try Self.dissolve()
        let folder = (Fixtures.scratchPath("x") as NSString).deletingLastPathComponent
        let session = ExportSession(composition: composition, preset: try #require(ExportPreset.named("HighestQuality")))
        session.videoComposition = videoComposition
        session.outputURL = folder + "/frames/%03d.png"
        try FileManager.default.createDirectory(atPath: folder + "/frames", withIntermediateDirectories: true)
        try session.export()
        let compositor = try Compositor(composition: composition, videoComposition: videoComposition)
        for number in [3, 30, 52] {
            let exported = try Tool.rgbFrame(folder + String(format: "/frames/%03d.png", number + 1), at: 0)
            let preview = try compositor.image(at: compositor.frameDuration * Int64(number))
            #expect(preview.width == exported.width && preview.height == exported.height)
            var total = 0, largest = 0
            for y in 0..<preview.height {
                let row = preview.row(y)
                for x in 0..<preview.width {
                    for channel in 0..<3 { // RGBAImage holds cairo's B, G, R, A bytes
                        let difference = abs(Int(row[x * 4 + 2 - channel]) - Int(exported.pixels[(y * exported.width + x) * 3 + channel]))
                        total += difference
                        largest = max(largest, difference)
                    }
                }
            }
            let mean = Double(total) / Double(preview.width * preview.height * 3)
            #expect(mean < 1.0 && largest <= 12, "frame \(number): mean \(mean), largest \(largest)")
        }
    }

    /// A preview size scales the pictures to fit, even-sized, aspect kept.
    @Test func aPreviewSizeFitsThePictures() throws {
        let (composition, videoComposition, _) = try Self.dissolve()
        let compositor = try Compositor(composition: composition, videoComposition: videoComposition, maxSize: (width: 100, height: 100))
        #expect(compositor.width == 100 && compositor.height == 74)
        let image = try compositor.image(at: .zero)
        #expect(image.width == 100 && image.height == 74)
        #expect(throws: EngineError.self) { try compositor.image(at: MediaTime(value: 2, timescale: 1)) }
    }

    /// The sound of a range is the exported sound of that range: an export of 0.5…1.5 s to
    /// PCM (no codec in between), decoded by ffmpeg, equals `audio(in:)` sample for sample.
    @Test func soundIsTheExportsSound() throws {
        let (composition, videoComposition, audioMix) = try Self.dissolve()
        let range = TimeRange(start: MediaTime(value: 1, timescale: 2), duration: MediaTime(value: 1, timescale: 1))
        let output = Fixtures.scratchPath("sound.mov")
        let session = ExportSession(composition: composition, preset: try #require(ExportPreset.named("LowQuality")))
        session.videoComposition = videoComposition
        session.audioMix = audioMix
        session.timeRange = range
        var pcm = AudioSettings()
        pcm.codec = .pcm
        pcm.channels = 1
        session.audioSettings = pcm
        session.outputURL = output
        try session.export()
        let exported = try Tool.audioSamples(output, rate: 48000, channels: 1)
        let rendered = try Compositor(composition: composition, videoComposition: videoComposition, audioMix: audioMix).audio(in: range)
        #expect(rendered.sampleRate == 48000 && rendered.channels.count == 1 && rendered.channels[0].count == 48000)
        #expect(exported.count == 48000)
        let worst = zip(rendered.channels[0], exported).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1.0 / 16384, "largest difference \(worst)")   // 16-bit PCM rounding
        // The ramp: louder at the start of the range than at its end.
        let level = { (samples: ArraySlice<Float>) in samples.map { $0 * $0 }.reduce(0, +) / Float(samples.count) }
        #expect(level(rendered.channels[0][0..<4800]) > 1.5 * level(rendered.channels[0][43200..<48000]))
    }
}

/// The studio's outline of an edit shows a crop as its numbers, and a clip shown whole (the
/// crop `av.videoComposition(comp, {fit = "fill"})` gives a clip after one that needed one)
/// as "whole", not as the sentinel rectangle a billion pixels wide.
@Test func theOutlineShowsACropAsItsNumbersAndNoCropAsWhole() {
    let layer = LayerInstruction(trackID: 1)
    layer.setCropRectangle(Rect(x: 40, y: 0.24999999999994316, width: 240, height: 240), at: .zero)
    layer.setCropRectangle(LayerInstruction.uncropped, at: MediaTime(value: 2, timescale: 1))
    let instruction = VideoCompositionInstruction(timeRange: TimeRange(start: .zero, duration: MediaTime(value: 4, timescale: 1)))
    instruction.layerInstructions = [layer]
    let videoComposition = VideoComposition(renderSize: Size(width: 320, height: 240), frameDuration: MediaTime(value: 1, timescale: 30))
    videoComposition.instructions = [instruction]
    let outline = EditOutline(composition: Composition(), videoComposition: videoComposition, audioMix: nil)
    let crops = outline.instructions.flatMap(\.layers).flatMap(\.ramps).filter { $0.kind == "crop" }.map(\.to)
    #expect(crops == ["40, 0.25, 240×240", "whole"], "\(crops)")
}
