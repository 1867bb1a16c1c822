import MoonreelComposition
import MoonreelMedia
import MoonreelRender

/// Text on a colour, shown for `duration` as a piece of a joined sequence. It is made of
/// ordinary layers in the video composition's animation tool (a coloured layer holding a
/// title and a subtitle text layer) over empty video time, as AVFoundation apps make them.
public final class TitleCard {
    /// The main line of text, centred; explicit line breaks are kept and long lines wrap.
    public var title: String
    /// A smaller line under the title, half its size; nil for none.
    public var subtitle: String?
    /// How long the card is shown, more than 0 (checked when joined); 3 s by default.
    public var duration: MediaTime
    /// The card's colour; black by default.
    public var backgroundColor = Color.black
    /// The colour of the title and subtitle; white by default.
    public var textColor = Color.white
    /// The font family of the title and subtitle, as fontconfig names it; the text layers'
    /// default (Noto Sans CJK JP) unless set.
    public var font = TextStyle(string: "").fontFamily
    /// The title's size in pixels; nil: a tenth of the frame's shorter side (so a vertical
    /// frame gets the size a landscape one of the same width would). The subtitle is half as big.
    public var fontSize: Double?

    /// 3 seconds.
    public static let defaultDuration = MediaTime(value: 3, timescale: 1)

    /// A card showing `title` in white on black for `duration`.
    public init(title: String, duration: MediaTime = TitleCard.defaultDuration) {
        self.title = title
        self.duration = duration
    }

    /// The card's layers for a frame of `size`, laid out from the top-left (its sublayers are
    /// to sit in a space whose y grows down). Title and subtitle are one block, measured as
    /// they wrap at the frame's width, centred on the frame: a title that wraps pushes the
    /// subtitle down instead of running into it.
    func makeLayer(in size: Size) throws -> Layer {
        let card = Layer()
        card.frame = Rect(x: 0, y: 0, width: size.width, height: size.height)
        card.backgroundColor = backgroundColor
        card.masksToBounds = true
        let titleSize = fontSize ?? (min(size.width, size.height) / 10).rounded()
        let (left, width) = (size.width * 0.05, size.width * 0.9)
        let measurer = try TextLayout()
        var blocks: [(layer: TextLayer, height: Double)] = []
        for (text, fontSize) in [(title, titleSize), (subtitle, titleSize / 2)] {
            guard let text, !text.isEmpty else { continue }
            var style = TextStyle(string: text)
            style.fontFamily = font
            style.fontSize = fontSize
            style.foregroundColor = textColor
            style.alignment = .center
            style.isWrapped = true
            blocks.append((TextLayer(style: style), try measurer.measuredHeight(style, width: width).rounded(.up)))
        }
        let gap = blocks.count > 1 ? (titleSize / 2).rounded() : 0
        var top = ((size.height - blocks.map(\.height).reduce(0, +) - gap) / 2).rounded()
        for (layer, height) in blocks {
            layer.frame = Rect(x: left, y: top, width: width, height: height)
            try card.addSublayer(layer)
            top += height + gap
        }
        return card
    }
}

extension Layer {
    /// Shown only during `range` (a discrete isHidden animation over a hidden model).
    func show(only range: TimeRange) throws {
        properties.isHidden = true
        let timing = AnimationTiming(beginTime: range.start, duration: range.duration)
        try addAnimation(.basic(BasicAnimation(keyPath: .isHidden, fromValue: .bool(false), toValue: .bool(false), timing: timing)),
                         forKey: "shown")
    }

    /// Applies a transition's `motion` over `range` to a full-frame layer (a title card):
    /// the same opacity ramps, moves and visible part as a layer instruction gets.
    func apply(_ motion: TransitionMotion, over range: TimeRange, in size: Size) throws {
        func animate(_ keyPath: AnimatableKeyPath, _ from: AnimatableValue, _ to: AnimatableValue, over range: TimeRange) throws {
            guard range.duration.value > 0 else { return }
            let animation = try BasicAnimation(keyPath: keyPath, fromValue: from, toValue: to,
                                               timing: AnimationTiming(beginTime: range.start, duration: range.duration,
                                                                       timingFunction: motion.timing == .linear ? nil : motion.timing))
            try addAnimation(.basic(animation), forKey: nil)
        }
        for ramp in motion.opacity {
            try animate(.opacity, .number(ramp.from), .number(ramp.to), over: ramp.range)
        }
        let centre = Point(x: size.width / 2, y: size.height / 2)
        if let offset = motion.offset {
            try animate(.position, .point(Point(x: centre.x + offset.from.x, y: centre.y + offset.from.y)),
                        .point(Point(x: centre.x + offset.to.x, y: centre.y + offset.to.y)), over: range)
        }
        if let scale = motion.scale {
            try animate(.transformScale, .number(scale.from), .number(scale.to), over: range)
        }
        if let blur = motion.blur {
            // Named by when it starts, so a card's blurs in and out are two filters.
            var gaussian = Filter(.gaussianBlur)
            gaussian.name = "transitionBlur\(range.start.value)_\(range.start.timescale)"
            properties.filters.append(gaussian)
            try animate(.filterParameter(filter: gaussian.name, parameter: "radius"), .number(blur.from), .number(blur.to), over: range)
        }
        if let mask = motion.mask ?? motion.inverseMask {
            // The mask is drawn in a y-up frame-sized space, as a layer instruction's is, and
            // only during the transition: the card shows whole before and after it.
            let space = Layer(), during = Layer()
            for layer in [space, during] { layer.frame = Rect(x: 0, y: 0, width: properties.frame.width, height: properties.frame.height) }
            space.isGeometryFlipped = !properties.isGeometryFlipped
            try during.show(only: range)
            try during.addSublayer(mask)
            try space.addSublayer(during)
            if motion.mask != nil { space.backgroundColor = .white }
            try space.addAnimation(.basic(BasicAnimation(keyPath: .backgroundColor, fromValue: .color(.clear), toValue: .color(.clear),
                                                         timing: AnimationTiming(beginTime: range.start, duration: range.duration))), forKey: nil)
            try setMask(space, inverted: motion.mask == nil)
        }
        if let visible = motion.visible {
            // Bounds and position move together, so the sublayers stay where they are while
            // the part of them the layer shows (it masks to its bounds) changes.
            let middle = { (r: Rect) in AnimatableValue.point(Point(x: r.x + r.width / 2, y: r.y + r.height / 2)) }
            try animate(.bounds, .rect(visible.from), .rect(visible.to), over: range)
            try animate(.position, middle(visible.from), middle(visible.to), over: range)
        }
    }
}

extension VideoComposition {
    /// A full-frame layer in the animation tool's tree whose sublayers are placed from the
    /// top-left, y down, like the composition's own pixels; the tool (a parent layer and a
    /// video layer) is made when there is none. Helpers put their layers here: on top of
    /// the tree, or (`besideVideo`) right above the video layer, under everything else, for
    /// what belongs with the video's own pictures.
    func overlayContainer(besideVideo: Bool = false) throws -> Layer {
        let frame = Rect(x: 0, y: 0, width: renderSize.width, height: renderSize.height)
        let tool: AnimationTool
        if let existing = animationTool {
            tool = existing
        } else {
            let parent = Layer(), video = Layer()
            parent.frame = frame
            video.frame = frame
            try parent.addSublayer(video)
            tool = try AnimationTool(videoLayer: video, parentLayer: parent)
            animationTool = tool
        }
        let container = Layer()
        container.frame = frame
        // The root's sublayers live in Core Animation's y-up space unless it is flipped.
        container.isGeometryFlipped = !tool.parentLayer.isGeometryFlipped
        let parent = tool.parentLayer
        if besideVideo, let video = parent.sublayers.firstIndex(where: { $0 === tool.videoLayer }) {
            try parent.insertSublayer(container, at: video + 1)
        } else {
            try parent.addSublayer(container)
        }
        return container
    }
}
