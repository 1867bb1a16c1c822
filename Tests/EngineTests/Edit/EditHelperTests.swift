import Testing
@testable import MoonreelEngine

/// The pure parts of the edit helpers: what a transition does to each side, the crop of a
/// wipe across a picture that does not fill the frame, and how an inset splits instructions.
@Suite struct EditHelperTests {
    func seconds(_ value: Double) -> MediaTime { MediaTime(seconds: value)! }

    @Test func transitionsMoveTheSideOnTopAndDefaultToTheirOwnDirection() {
        let size = Size(width: 400, height: 200), range = TimeRange(start: seconds(1), duration: seconds(1))
        #expect(Transition(.slide, duration: seconds(1)).direction == .left)
        #expect(Transition(.wipe, duration: seconds(1)).direction == .right)
        #expect(Transition(.none, duration: seconds(1)).duration == .zero)
        let dissolve = Transition(.dissolve, duration: seconds(1))
        let (fadingOut, under) = dissolve.motions(over: range, in: size, incomingOnTop: false)
        #expect(fadingOut.opacity.map { [$0.from, $0.to] } == [[1, 0]] && under.opacity.isEmpty)
        let (beneath, fadingIn) = dissolve.motions(over: range, in: size, incomingOnTop: true)
        #expect(beneath.opacity.isEmpty && fadingIn.opacity.map { [$0.from, $0.to] } == [[0, 1]])
        let (out, into) = Transition(.slide, duration: seconds(1), direction: .up).motions(over: range, in: size, incomingOnTop: false)
        #expect(out.offset?.to == Point(x: 0, y: -200) && into.offset?.from == Point(x: 0, y: 200))
        let (black, fromBlack) = Transition(.fadeThroughBlack, duration: seconds(1)).motions(over: range, in: size, incomingOnTop: false)
        #expect(black.opacity.map(\.range.end) == [seconds(1.5), seconds(2)] && fromBlack.opacity.last?.range.start == seconds(1.5))
    }

    /// A 100×200 portrait picture pillarboxed in a 400×200 frame (x 150…250): the edge of a
    /// wipe crosses the picture only from 3/8 to 5/8 of the transition, and the crop (in
    /// stored pixels) moves only then, in a straight line, never outside the picture.
    @Test func wipeCropsAPillarboxedPictureOnlyWhileTheEdgeCrossesIt() throws {
        let stored = Size(width: 100, height: 200), size = Size(width: 400, height: 200)
        let placement = VideoComposition.Placement.fit.transform(for: stored, .identity, in: size)
        let range = TimeRange(start: seconds(0), duration: seconds(4))
        let (outgoing, _) = Transition(.wipe, duration: range.duration).motions(over: range, in: size, incomingOnTop: false)
        let layer = LayerInstruction(trackID: 1)
        try layer.apply(outgoing, over: range, placement: placement, shown: placement.apply(Rect(x: 0, y: 0, width: stored.width, height: stored.height)), in: size)
        let crop = { (t: Double) in layer.crop?.value(at: self.seconds(t)) }
        #expect(crop(0) == Rect(x: 0, y: 0, width: 100, height: 200))
        #expect(crop(1.4) == Rect(x: 0, y: 0, width: 100, height: 200))
        #expect(crop(2) == Rect(x: 50, y: 0, width: 50, height: 200))
        #expect(crop(2.6)?.width == 0 && crop(3.9)?.width == 0 && crop(3.9)?.x == 100)
    }

    @Test func insetSplitsOnlyTheInstructionsItOverlapsAndCoversTimeAfterThem() {
        let under = LayerInstruction(trackID: 1), inset = LayerInstruction(trackID: 2)
        let first = VideoCompositionInstruction(timeRange: TimeRange(start: seconds(0), duration: seconds(2)))
        let second = VideoCompositionInstruction(timeRange: TimeRange(start: seconds(2), duration: seconds(2)))
        first.layerInstructions = [under]
        second.layerInstructions = [under]
        let split = PictureInPicture.split([first, second], adding: inset, over: TimeRange(start: seconds(3), duration: seconds(2)))
        #expect(split.map(\.timeRange.start) == [seconds(0), seconds(2), seconds(3), seconds(4)])
        #expect(split[0] === first, "an instruction the inset does not touch stays as it was")
        #expect(split.map { $0.layerInstructions.map(\.trackID) } == [[1], [1], [2, 1], [2]])
        let late = PictureInPicture.split([first], adding: inset, over: TimeRange(start: seconds(3), duration: seconds(1)))
        #expect(late.map(\.timeRange) == [first.timeRange, TimeRange(from: seconds(2), to: seconds(3)), TimeRange(from: seconds(3), to: seconds(4))])
        #expect(late[1].layerInstructions.isEmpty, "the gap before a late inset is covered, empty")
    }

    @Test func insetFrameKeepsTheAspectAndTheMarginInEachCorner() {
        var pip = PictureInPicture()
        pip.scale = 0.25
        pip.margin = 0.05
        let frame = Size(width: 1920, height: 1080), portrait = Size(width: 1080, height: 1920)
        pip.corner = .topLeft
        #expect(pip.insetFrame(for: portrait, in: frame) == Rect(x: 54, y: 54, width: 480, height: 853))
        pip.corner = .bottomRight
        #expect(pip.insetFrame(for: frame, in: frame) == Rect(x: 1920 - 54 - 480, y: 1080 - 54 - 270, width: 480, height: 270))
    }
}
