import Hummingbird
import CompressNIO
