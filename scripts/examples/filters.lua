-- A look for a whole clip, with Core Image-style filters: a colour grade (a .cube LUT if
-- given, then a little more contrast and saturation) and a vignette on every frame, and an
-- opening that comes into focus (the blur ramps from soft to sharp over the first second).
-- A title comes into focus too (a layer animation of its filter's radius) over a soft
-- shadow, a blurred copy of it; the video composition's filters leave the title alone.
--
-- usage: moonreel run filters.lua IN.mov OUT.mp4 [TITLE [LOOK.cube]]
local input, output = arg[1], arg[2]
if not (input and output) then
  error("usage: moonreel run filters.lua IN.mov OUT.mp4 [TITLE [LOOK.cube]]", 0)
end
local title, look = arg[3] or "Moonreel", arg[4]

local asset = av.asset(input)
local comp = av.composition()
comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)

-- Applied in order to each composed frame (upright already: av.videoComposition(comp)
-- takes the size, rate and turn from the file).
local grade = {}
if look then grade[#grade + 1] = av.filter("colorCube", { path = look }) end
grade[#grade + 1] = av.filter("colorControls", { contrast = 1.1, saturation = 1.2 })
grade[#grade + 1] = av.filter("vignette", { intensity = 0.5, radius = 1 })
grade[#grade + 1] = av.filter("gaussianBlur", { radius = 0, name = "focus" })
local vc = av.videoComposition(comp, { filters = grade })
local opening = math.min(1, comp.duration / 2)
vc:setFilterRamp("focus", "radius", 12, 0, av.range(0, opening), "easeOut")

-- The title, centred near the bottom (Core Animation geometry: y up from the bottom).
local size = vc.renderSize
local fontSize = math.floor(size.height / 10)
local box = { 0, size.height / 12, size.width, fontSize * 1.5 }
local parent = av.layer{ frame = { 0, 0, size.width, size.height } }
local video = av.layer{ frame = { 0, 0, size.width, size.height } }
parent:addSublayer(video)
local shadow = av.textLayer{ string = title, fontSize = fontSize, foregroundColor = "black", alignmentMode = "center",
                             frame = { box[1] + fontSize / 16, box[2] - fontSize / 16, box[3], box[4] } }
shadow.filters = { av.filter("gaussianBlur", { radius = fontSize / 10 }) }
local text = av.textLayer{ string = title, fontSize = fontSize, foregroundColor = "white", alignmentMode = "center",
                           frame = box }
text.filters = { av.filter("gaussianBlur", { radius = 0, name = "soft" }) }
text:addAnimation(av.basicAnimation{ keyPath = "filters.soft.radius", fromValue = fontSize / 4, toValue = 0,
                                     duration = opening, timingFunction = "easeOut" }, "focus")
parent:addSublayer(shadow)
parent:addSublayer(text)
vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %s graded%s, in focus after %g s, titled %q"):format(output, input, look and (" with " .. look) or "", opening, title))
