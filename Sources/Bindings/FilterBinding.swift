import CMoonLua
import MoonreelEngine
import MoonreelScriptHost
import MoonreelPlatform

/// `av.filter` (CIFilter) and where filters go: `layer.filters` (CALayer.filters),
/// `vc.filters` and `li.filters`, with `setFilterValue`/`setFilterRamp` on the latter two.
/// A filter object holds settings; whatever takes it keeps a copy, as Core Animation copies
/// a layer's filters: change a filter afterwards and nothing else changes (a note says so).
final class FilterBox {
    private(set) var filter: Filter
    /// Whether a copy went somewhere, so a later change does not reach it.
    var isCopied = false
    /// Whether the script was told that a change after copying is not seen.
    var warnedAboutChange = false

    init(_ filter: Filter) { self.filter = filter }

    func update(_ change: (inout Filter) throws -> Void) rethrows { try change(&filter) }
}

extension API {
    /// The common Filter class, and one class per kind (with its parameters as properties)
    /// kept in `filterKinds`.
    func makeFilterClasses() -> LuaClass {
        let base = LuaClass("Filter", doc: "A filter (CIFilter) made by av.filter(name, {parameters}), for layer.filters, vc.filters and li.filters (docs/filters.md). Each kind below is a Filter with its own parameters.")
        base.describe = { object in (object as? FilterBox).map { API.describe($0.filter) } ?? "Filter" }
        base.footprint = { object in 256 + ((object as? FilterBox)?.filter.values.values.reduce(0) { $0 + $1.footprint } ?? 0) }
        base.property("name", of: FilterBox.self, doc: "what key paths and ramps call it (filters.NAME.radius); the kind's name unless set",
                      get: { call, box in call.push(box.filter.name) },
                      set: { call, box, index in
                          let api = try call.api()
                          let name = try call.filterName(index)
                          try api.changeFilter(call, box) { $0.name = name }
                      })
        base.property("kind", of: FilterBox.self, doc: "the kind: " + FilterKind.allCases.map(\.rawValue).joined(separator: ", ")) { call, box in
            call.push(box.filter.kind.rawValue)
        }
        base.property("parameters", of: FilterBox.self, doc: "a table of every parameter's value") { call, box in
            call.pushRecord {
                for parameter in box.filter.kind.parameters {
                    call.pushFilterValue(box.filter.values[parameter.name])
                    call.setField(parameter.name)
                }
            }
        }
        base.method("setValue", of: FilterBox.self, doc: "f:setValue(value, key): CIFilter's setValue(_:forKey:); key is a parameter or its Core Image name (\"inputRadius\")") { call, box in
            let api = try call.api()
            let parameter = try api.filterParameter(call, 3, named: try call.string(3), of: box.filter.kind)
            let value = try api.filterValue(call, 2, parameter)
            try api.changeFilter(call, box) { try $0.set(parameter.name, value) }
            return 0
        }
        base.method("value", of: FilterBox.self, readOnly: true, doc: "f:value(key): a parameter's value (CIFilter's value(forKey:))") { call, box in
            let api = try call.api()
            let parameter = try api.filterParameter(call, 2, named: try call.string(2), of: box.filter.kind)
            call.pushFilterValue(box.filter.values[parameter.name])
            return 1
        }
        base.alias("valueForKey", of: "value")
        base.example = """
            local blur = av.filter("gaussianBlur", { radius = 8 })   -- or "CIGaussianBlur", { inputRadius = 8 }
            blur.radius = 12
            print(blur)                                              --> Filter(gaussianBlur, radius 12)
            """

        for kind in FilterKind.allCases {
            let name = kind.rawValue.prefix(1).uppercased() + kind.rawValue.dropFirst() + "Filter"
            let coreImage = kind.coreImageName.map { " Core Image: \($0)." } ?? ""
            let luaClass = LuaClass(name, parent: base, doc: "av.filter(\"\(kind.rawValue)\"): \(kind.summary).\(coreImage)")
            for parameter in kind.parameters {
                luaClass.property(parameter.name, of: FilterBox.self, doc: parameterDoc(parameter, of: kind),
                                  get: { call, box in call.pushFilterValue(box.filter.values[parameter.name]) },
                                  set: { call, box, index in
                                      let api = try call.api()
                                      let value = try api.filterValue(call, index, parameter)
                                      try api.changeFilter(call, box) { try $0.set(parameter.name, value) }
                                  })
            }
            luaClass.example = Self.filterExamples[kind] ?? ""
            filterKinds[kind] = luaClass
        }
        return base
    }

    private static let filterExamples: [FilterKind: String] = [
        .gaussianBlur: """
            local vc = av.videoComposition(comp, { filters = { av.filter("gaussianBlur", { radius = 0 }) } })
            vc:setFilterRamp("gaussianBlur", "radius", 0, 20, av.range(0, 2))   -- blur in over 2 s
            """,
        .colorControls: """
            li.filters = { av.filter("colorControls", { saturation = 0, contrast = 1.2 }) }   -- black and white
            """,
        .exposureAdjust: """
            vc.filters = { av.filter("CIExposureAdjust", { inputEV = -1 }) }   -- one stop darker
            """,
        .colorCube: """
            vc.filters = { av.filter("colorCube", { path = "looks/teal-orange.cube" }) }
            """,
        .sharpenLuminance: """
            vc.filters = { av.filter("sharpenLuminance", { sharpness = 0.8, radius = 2 }) }
            """,
        .vignette: """
            vc.filters = { av.filter("vignette", { intensity = 0.6, radius = 1 }) }
            """,
        .whitePointAdjust: """
            vc.filters = { av.filter("whitePointAdjust", { color = { 1, 0.93, 0.82 } }) }   -- warmer
            """,
        .chromaKey: """
            local keyed = av.layerInstruction(greenScreenTrack)        -- drawn over the track under it
            keyed.filters = { av.filter("chromaKey", { color = "#00FF00", similarity = 0.12, blend = 0.08 }) }
            """,
        .lumaThreshold: """
            -- A luma wipe's mask: a grey picture whose dark parts show first as the threshold rises.
            local mask = av.layer{ frame = { 0, 0, 1920, 1080 }, contents = av.image("clouds.png"),
                                   filters = { av.filter("lumaThreshold", { threshold = 0, softness = 0.1, name = "wipe" }) } }
            mask:addAnimation(av.basicAnimation{ keyPath = "filters.wipe.threshold", fromValue = -0.05, toValue = 1.05, beginTime = 4, duration = 1 })
            """,
        .grain: """
            vc.filters = { av.filter("grain", { amount = 0.3, size = 1.5, seed = 7 }) }
            vc:setFilterRamp("grain", "amount", 0.6, 0.2, av.range(0, 3))   -- heavy grain settling over 3 s
            """,
        .glitch: """
            vc.filters = { av.filter("glitch", { intensity = 0.8, shift = 12, bands = 6, rate = 1, burst = 0.3, seed = 3 }) }
            """,
    ]

    /// The reference line of a parameter: what it takes, its range and default, its meaning.
    private func parameterDoc(_ parameter: FilterParameter, of kind: FilterKind) -> String {
        let coreImage = kind.coreImageName == nil ? "" : "; Core Image: \(parameter.coreImageKey)"
        return switch parameter.kind {
        case .number(let range, let value):
            "number \(format(range.lowerBound))…\(format(range.upperBound)), default \(format(value)): \(parameter.doc)\(coreImage)"
        case .color(let value):
            "colour, default \(value.hexString): \(parameter.doc)"
        case .file:
            "path: \(parameter.doc); unset, the filter changes nothing"
        }
    }

    /// "Filter(gaussianBlur, radius 8)", with the name when it is not the kind's.
    static func describe(_ filter: Filter) -> String {
        let settings = filter.kind.parameters.compactMap { parameter -> String? in
            switch filter.values[parameter.name] {
            case .number(let n): "\(parameter.name) \(format(n))"
            case .color(let c): "\(parameter.name) \(c.hexString)"
            case .cube(let cube): "\(parameter.name) \(cube.path.quotedForMessage())"
            case nil: nil
            }
        }
        let kind = filter.name == filter.kind.rawValue ? filter.kind.rawValue : "\(filter.kind.rawValue) \(filter.name.quotedForMessage())"
        return "Filter(\(([kind] + settings).joined(separator: ", ")))"
    }

    /// A change to a filter object, with a note (once) if a copy of it was already taken.
    private func changeFilter(_ call: LuaCall, _ box: FilterBox, _ change: (inout Filter) throws -> Void) throws {
        try box.update(change)
        guard box.isCopied, !box.warnedAboutChange else { return }
        box.warnedAboutChange = true
        try policy.report(Diagnostic(.optionIgnored, .warning, "filter \(box.filter.name) was changed after a layer or video composition took a copy of it; the copy is unchanged",
                                     remedy: "assign the filters again to use the change"), at: call.L)
    }

    /// The parameter `key` names (its own name or Core Image's "inputRadius").
    private func filterParameter(_ call: LuaCall, _ index: Int32, named key: String, of kind: FilterKind) throws -> FilterParameter {
        if let parameter = kind.parameter(key) { return parameter }
        let names = kind.parameters.map(\.name)
        throw call.argumentError(index, "\(kind.rawValue) has no parameter \(key.quotedForMessage())\(NameSuggestion.hint(for: key, among: names)) (parameters: \(names.joined(separator: ", ")))")
    }

    /// A Lua value as a value of `parameter`; a LUT path is read (and validated) now.
    private func filterValue(_ call: LuaCall, _ index: Int32, _ parameter: FilterParameter) throws -> FilterValue {
        switch parameter.kind {
        case .number(let range, _):
            let value = try call.finite(index)
            guard range.contains(value) else {
                throw call.argumentError(index, "\(parameter.name) must be in \(format(range.lowerBound))…\(format(range.upperBound)), got \(format(value))")
            }
            return .number(value)
        case .color:
            return .color(try call.color(index))
        case .file:
            let path = try call.readablePath(index)
            readFiles.record(path)
            do { return .cube(try ColorCube.read(path: path)) } catch let error as EngineError {
                throw call.argumentError(index, error.message, cause: error)
            }
        }
    }

    func pushFilter(_ call: LuaCall, _ filter: Filter) {
        call.push(FilterBox(filter), as: filterKinds[filter.kind] ?? classes[FilterBox.self])
    }

    /// `filters`, `setFilterValue` and `setFilterRamp` of a class whose objects hold a
    /// `FilterStack` (video compositions and layer instructions).
    private func addFilterStack<T: AnyObject>(to luaClass: LuaClass, _ type: T.Type, _ stack: ReferenceWritableKeyPath<T, FilterStack>, doc: String) {
        luaClass.property("filters", of: T.self, doc: doc,
                          get: { call, object in
                              let api = try call.api()
                              call.pushArray(object[keyPath: stack].filters) { api.pushFilter(call, $0) }
                          },
                          set: { call, object, index in object[keyPath: stack].filters = try call.filterList(index) })
        luaClass.method("setFilterValue", of: T.self, doc: "obj:setFilterValue(filter or name, key, value, atTime): the parameter holds value from atTime on") { call, object in
            let api = try call.api()
            let (name, key) = try api.filterParameterReference(call, object[keyPath: stack].filters)
            let value = try call.finite(4), at = try call.time(5)
            var cut: TimeRange?
            try api.filterStackChange(call) { cut = try object[keyPath: stack].setValue(value, parameter: key, filter: name, at: at) }
            try api.reportRampCut(call, "\(name).\(key)", cut: cut, by: TimeRange(start: at, duration: .zero))
            return 0
        }
        luaClass.method("setFilterRamp", of: T.self, doc: "obj:setFilterRamp(filter or name, key, from, to, range [, timing]): the parameter moves from one value to the other over range, then holds") { call, object in
            let api = try call.api()
            let (name, key) = try api.filterParameterReference(call, object[keyPath: stack].filters)
            let (from, to) = (try call.finite(4), try call.finite(5))
            let (range, timing) = (try call.timeRange(6), try call.curve(7))
            var cut: TimeRange?
            try api.filterStackChange(call) { cut = try object[keyPath: stack].setRamp(from: from, to: to, parameter: key, filter: name, over: range, curve: timing) }
            try api.reportRampCut(call, "\(name).\(key)", cut: cut, by: range)
            return 0
        }
    }

    /// Arguments 2 and 3 of setFilterValue/setFilterRamp: the filter's name and its parameter.
    private func filterParameterReference(_ call: LuaCall, _ filters: [Filter]) throws -> (String, String) {
        let name: String
        if let box: FilterBox = try? call.object(2, FilterBox.self) { name = box.filter.name } else {
            guard call.type(2) == LUA_TSTRING else { throw call.typeError(2, expected: "Filter or filter name") }
            name = try call.string(2)
        }
        let key = try call.string(3)
        guard let target = filters.first(where: { $0.name == name }) else { return (name, key) } // the engine's message lists the names
        return (name, try filterParameter(call, 3, named: key, of: target.kind).name)
    }

    private func filterStackChange(_ call: LuaCall, _ body: () throws -> Void) throws {
        do { try body() } catch let error as EngineError {
            throw LuaArgumentError("\(call.functionName): \(error.scriptMessage)", kind: error.kind.rawValue, subject: error.subject)
        }
    }

    /// Lists the kinds' classes, and adds the filter properties and methods to layers, video
    /// compositions and layer instructions.
    func completeFilterClasses() {
        for kind in FilterKind.allCases { if let luaClass = filterKinds[kind] { classes.add(variant: luaClass) } }
        classes[Layer.self].property("filters", of: Layer.self, doc: "av.filter objects applied to the layer and its sublayers as drawn, in order (copies; animate filters.NAME.PARAM)",
                       get: { call, layer in
                           let api = try call.api()
                           call.pushArray(layer.filters) { api.pushFilter(call, $0) }
                       },
                       set: { call, layer, index in layer.filters = try call.filterList(index) })
        addFilterStack(to: classes[VideoComposition.self], VideoComposition.self, \.filters,
                       doc: "av.filter objects applied to every composed frame, in order, before the animation tool's layers (copies)")
        addFilterStack(to: classes[LayerInstruction.self], LayerInstruction.self, \.filters,
                       doc: "av.filter objects applied to the track's picture before it is placed, in order (copies); chromaKey lets what is under it show")
    }

    var filterFunctions: [AVFunction] {
        [("filter", "av.filter(name [, {parameters}]): a filter (CIFilter) for layer.filters, vc.filters or li.filters; names: \(FilterKind.allCases.map(\.rawValue).joined(separator: ", ")) (or Core Image's, \"CIGaussianBlur\")", { call in
            let api = try call.api()
            let requested = try call.string(1)
            guard let kind = FilterKind(named: requested) else {
                let names = FilterKind.allCases.map(\.rawValue)
                throw call.argumentError(1, "unknown filter \(requested.quotedForMessage())\(NameSuggestion.hint(for: requested, among: names)) (filters: \(names.joined(separator: ", ")))")
            }
            var made = Filter(kind)
            if !call.isNoneOrNil(2) {
                guard call.type(2) == LUA_TTABLE else { throw call.typeError(2, expected: "table of \(kind.rawValue) parameters") }
                try call.forEachField(of: 2) { key in
                    let parameter = key == "name" ? nil : try api.filterParameter(call, 2, named: key, of: kind)
                    do {
                        if let parameter {
                            try made.set(parameter.name, try api.filterValue(call, call.absolute(-1), parameter))
                        } else {
                            made.name = try call.filterName(call.absolute(-1))
                        }
                    } catch let error as LuaArgumentError {
                        // The value's own check numbers its stack slot; name the table and field.
                        throw call.argumentError(2, "field '\(key)': \(error.message.argumentReason)", cause: error)
                    }
                }
            }
            api.pushFilter(call, made)
            return 1
        })]
    }
}

extension FilterValue {
    /// Bytes a value takes: a LUT's table, or a few for the rest.
    var footprint: Int {
        if case .cube(let cube) = self { return cube.byteCount }
        return 16
    }
}

private extension LuaCall {
    func pushFilterValue(_ value: FilterValue?) {
        switch value {
        case .number(let n): push(n)
        case .color(let c): push(color: c)
        case .cube(let cube): push(cube.path)
        case nil: pushNil()
        }
    }

    func filterName(_ index: Int32) throws -> String {
        let name = try string(index)
        guard !name.isEmpty, name.count <= 64, !name.contains(".") else {
            throw argumentError(index, "a filter name must be 1…64 characters without dots (it is part of key paths such as filters.NAME.radius), got \(name.quotedForMessage())")
        }
        return name
    }
}

extension LuaCall {
    /// An array of filter objects, copied (the objects are marked, so a later change to one
    /// gets a note). nil is no filters.
    func filterList(_ index: Int32) throws -> [Filter] {
        guard !isNoneOrNil(index) else { return [] }
        let boxes = try array(index, of: FilterBox.self)
        for box in boxes { box.isCopied = true }
        return boxes.map(\.filter)
    }
}

extension Binding {
    static let filter = Binding(classes: [.init(FilterBox.self) { $0.makeFilterClasses() }],
                              functions: { $0.filterFunctions }, completeClasses: { $0.completeFilterClasses() })
}
