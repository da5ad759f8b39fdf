import Granite
print("sample")
