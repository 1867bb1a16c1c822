-- Record from a camera and microphone, then hand the take to a library folder, as an iOS
-- app exports a finished movie to the photo library and deletes its own copy: the take is
-- exported with a preset, the copy is reopened and checked, moved in as
-- LIBRARY/2026/11/2026-11-24 14.03.22.mp4 with a .json sidecar, and only once both are on
-- disk is the take deleted. Killed at any moment, the take is the file you recorded or the
-- one in the library; running this again (or any av.mediaLibrary of that folder) finishes a
-- hand-off a killed run left half done.
--
-- usage: moonreel run record_to_library.lua TAKE.mp4 LIBRARY [FPS] [SECONDS] [PRESET]
--        (default 30 fps, 5 s, HighestQuality; virtual devices lavfi:testsrc2 and lavfi:sine,
--         or set CAMERA and MICROPHONE to device IDs from `moonreel record --list`)
local take, folder = arg[1], arg[2]
local fps, seconds = tonumber(arg[3] or "30"), tonumber(arg[4] or "5")
if not (take and folder and fps and seconds) then
  error("usage: moonreel run record_to_library.lua TAKE.mp4 LIBRARY [FPS] [SECONDS] [PRESET]", 0)
end

local camera = av.captureDevice(os.getenv("CAMERA") or "lavfi:testsrc2")
camera:format{ width = 640, height = 480, frameRate = fps } -- the format that supports the rate
local session = av.captureSession()
session:addInput(camera)
session:addInput(av.captureDevice(os.getenv("MICROPHONE") or "lavfi:sine"))
session.onStarted = function(path) print("recording " .. path) end
assert(session:startRecording(take, { maxDuration = seconds }))
local summary = assert(session:wait())
print(string.format("recorded %.2f s, %d frames (%d dropped)", summary.duration, summary.videoFrames, summary.droppedVideoFrames))

local library = av.mediaLibrary(folder)
for _, item in ipairs(library.recovered) do print("finished an earlier hand-off: " .. item.path) end
local item, err = library:add(summary, { preset = arg[5] or "HighestQuality", deleteSource = true })
if not item then error(err, 0) end
print(string.format("in the library: %s (%.2f s, %s), sidecar %s; take deleted: %s",
  item.path, item.duration, table.concat(item.streams, " + "), item.sidecar, tostring(item.sourceDeleted)))
