-- Picture-in-picture over a coloured background: the clip, upright and scaled down, sits
-- in a corner of a frame of its own size; the rest of the frame is the background.
--
-- usage: moonreel run background.lua IN.mov OUT.mp4 [SCALE [CORNER [COLOR]]]
--        (default: 0.5, "bottomRight", "red"; CORNER is topLeft, topRight,
--        bottomLeft or bottomRight)
local input, output = arg[1], arg[2]
if not (input and output) then
  error("usage: moonreel run background.lua IN.mov OUT.mp4 [SCALE [CORNER [COLOR]]]", 0)
end
local scale = tonumber(arg[3] or "0.5")
local corner = arg[4] or "bottomRight"
local color = arg[5] or "red"
if not (scale and scale > 0 and scale <= 1) then
  error("SCALE must be a number in (0, 1], got " .. tostring(arg[3]), 0)
end
local corners = { topLeft = { 0, 0 }, topRight = { 1, 0 }, bottomLeft = { 0, 1 }, bottomRight = { 1, 1 } }
local side = corners[corner]
if not side then error("CORNER must be topLeft, topRight, bottomLeft or bottomRight, got " .. corner, 0) end

local asset = av.asset(input)
local source = asset:tracksWithMediaType("video")[1]
if not source then error(input .. " has no video track", 0) end
local comp = av.composition()
comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)

-- The frame keeps the clip's own upright size and rate; only the layer is moved.
local vc = av.videoComposition(comp)
local size = vc.renderSize
local margin = math.floor(math.min(size.width, size.height) / 20)
local x = side[1] * (size.width * (1 - scale) - 2 * margin) + margin
local y = side[2] * (size.height * (1 - scale) - 2 * margin) + margin

local layer = av.layerInstruction(comp:tracksWithMediaType("video")[1])
-- Upright first, then scaled and moved into the corner.
layer:setTransform(source.preferredTransform:concat(av.transform{ scale, 0, 0, scale, x, y }), 0)
vc.instructions = {
  av.videoCompositionInstruction{ timeRange = av.range(0, comp.durationTime), backgroundColor = color,
                                  layerInstructions = { layer } },
}

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %s at %g×, %s corner, over %s"):format(output, input, scale, corner, color))
