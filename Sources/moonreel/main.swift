import MoonreelKit
print("moonreel")
