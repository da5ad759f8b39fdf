import Granite
