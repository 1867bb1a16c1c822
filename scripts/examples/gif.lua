-- An animated GIF of part of a movie: 10 frames a second, at most 480 pixels wide, its
-- 256 colours chosen for the whole clip (a first pass builds the palette, as ffmpeg's
-- palettegen and paletteuse do). GIFs have no sound: the audio is left out, with a note.
--
-- usage: moonreel run gif.lua IN.mov OUT.gif [START [DURATION]]   (default: 0 s for 3 s)
local input, output = arg[1], arg[2]
if not (input and output) then
  error("usage: moonreel run gif.lua IN.mov OUT.gif [START [DURATION]]", 0)
end
local start = tonumber(arg[3] or "0")
local duration = tonumber(arg[4] or "3")

local asset = av.asset(input)
local comp = av.composition()
comp:insertTimeRange(av.range(start, math.min(duration, asset.duration - start)), asset, 0)

-- "Properties of" the composition: its size and upright phone video, at 10 fps, scaled down.
local vc = av.videoComposition(comp)
vc.frameDuration = av.time(1, 10)
vc.renderScale = math.min(1, 480 / vc.renderSize.width)

local session = av.exportSession(comp, "HighestQuality")
session.outputURL = output
session.videoComposition = vc
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.1f s at 10 fps"):format(output, comp.duration))
