-- av.join and av.cutToBeats: one join drawn by a transition effect.
-- arg: the effect's name, the options the join gives it ({ renderSize =, start =, duration = }),
-- the join's own entry ({ name, duration =, direction =, effect's parameters… } or nil), and the
-- built-in transitions' names for the message when there is no such effect. Returns what the
-- effect made: a mask layer for the incoming picture, or { incoming = {…}, outgoing = {…} }.
local name, options, entry, builtIn = ...

local found, effect = pcall(require, "effects." .. name)
if not found then
  if tostring(effect):find("module 'effects." .. name .. "' not found", 1, true) then
    error(('unknown transition "%s" (use %s; "cut" is "none"; or a transition effect\'s name: moonreel effects list shows them)'):format(name, builtIn), 0)
  end
  error(effect, 0)
end
if effect.kind ~= "transition" then
  error(('effect "%s" is not a transition (it does not say kind = "transition"); use it with require "effects.%s"'):format(name, name), 0)
end
for key, value in pairs(entry or {}) do
  -- The entry's name and length are the join's; everything else is the effect's.
  if key ~= 1 and key ~= "duration" then options[key] = value end
end
return effect(options)
