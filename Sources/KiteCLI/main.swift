import ArgumentParser
import Kite

print("hi")
