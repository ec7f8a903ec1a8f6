import Kite
import ArgumentParser
print("hi")
