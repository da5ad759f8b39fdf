import Testing
@testable import Marble

struct FilterSpecTests {
    @Test func parsesNameAndParameters() throws {
        let spec = try FilterSpec.parse("blur:sigma=2")
        #expect(spec.name == "blur")
        #expect(spec.values["sigma"] == .float(2))
        let color = try FilterSpec.parse(" brightness : amount=0.1 , contrast=1.2 ")
        #expect(color.values["amount"] == .float(0.1))
        #expect(color.values["contrast"] == .float(1.2))
        #expect(color.values["saturation"] == .float(1), "missing parameters take their defaults")
    }

    @Test func parsesIntegersAndChoices() throws {
        let spec = try FilterSpec.parse("resize:width=320,height=200,mode=area")
        #expect(spec.values == ["width": .int(320), "height": .int(200), "mode": .choice("area")])
        #expect(try FilterSpec.parse("analog:blend=overlay").values["blend"] == .choice("overlay"))
    }

    @Test func unknownFilterListsTheValidOnes() {
        #expect {
            try FilterSpec.parse("blurry:sigma=2")
        } throws: { error in
            guard case let MarbleError.unknownFilter(name, valid) = error else { return false }
            return name == "blurry" && valid.contains("blur") && valid.contains("godRay") && valid.count == Marble.catalog.count
                && "\(error)".contains("valid filters: brightness")
        }
    }

    /// One spelling per filter: `sharpen=1` is refused with the spelling that runs it.
    @Test func unnamedValueIsRefusedWithTheRightSpelling() throws {
        #expect(throws: MarbleError.unnamedValue(text: "sharpen=1", spelling: "sharpen:amount=1")) { try FilterSpec.parse("sharpen=1") }
        #expect(throws: MarbleError.unnamedValue(text: " blur = 2 ", spelling: "blur:sigma=2")) { try FilterSpec.parse(" blur = 2 ") }
        // A value that fits no first parameter gets the keys; a filter with none says so.
        #expect(throws: MarbleError.unnamedValue(text: "resize=50%", spelling: "resize:key=value with key one of width, height, mode")) {
            try FilterSpec.parse("resize=50%")
        }
        #expect(throws: MarbleError.unnamedValue(text: "sharpen=9", spelling: "sharpen:key=value with key one of amount, sigma")) {
            try FilterSpec.parse("sharpen=9")
        }
        #expect(throws: MarbleError.unnamedValue(text: "invert=1", spelling: "invert (it takes no values)")) { try FilterSpec.parse("invert=1") }
        #expect("\(MarbleError.unnamedValue(text: "sharpen=1", spelling: "sharpen:amount=1"))"
            == "filter spec \"sharpen=1\": a filter's values are named; write sharpen:amount=1")
        // The spelling it suggests parses, and an unknown name is still an unknown filter.
        #expect(try FilterSpec.parse("sharpen:amount=1").values["amount"] == .float(1))
        #expect(throws: MarbleError.unknownFilter(name: "nope=1", valid: Marble.catalog.map(\.name))) { try FilterSpec.parse("nope=1") }
    }

    @Test func unknownParameterListsTheValidOnes() {
        #expect(throws: MarbleError.unknownParameter(filter: "blur", name: "radius", valid: ["sigma"])) {
            try FilterSpec.parse("blur:radius=3")
        }
    }

    @Test func outOfRangeAndBadValuesSayWhatIsValid() {
        #expect(throws: MarbleError.invalidValue(filter: "blur", parameter: "sigma", value: "100", valid: "a number in 0.1...32")) {
            try FilterSpec.parse("blur:sigma=100")
        }
        #expect(throws: MarbleError.invalidValue(filter: "pixellate", parameter: "size", value: "2.5", valid: "an integer in 1...256")) {
            try FilterSpec.parse("pixellate:size=2.5")
        }
        #expect(throws: MarbleError.invalidValue(filter: "analog", parameter: "blend", value: "add",
                                                 valid: "one of normal|screen|multiply|overlay")) {
            try FilterSpec.parse("analog:blend=add")
        }
        #expect(throws: MarbleError.invalidValue(filter: "blur", parameter: "sigma", value: "nan", valid: "a number in 0.1...32")) {
            try FilterSpec.parse("blur:sigma=nan")
        }
        let message = "\(MarbleError.invalidValue(filter: "blur", parameter: "sigma", value: "100", valid: "a number in 0.1...32"))"
        #expect(message == "filter blur: sigma=100 is invalid; expected a number in 0.1...32")
    }

    @Test func malformedSpecs() {
        #expect(throws: MarbleError.self) { try FilterSpec.parse("") }
        #expect(throws: MarbleError.self) { try FilterSpec.parse("blur:sigma") }
        #expect(throws: MarbleError.self) { try FilterSpec.parse("blur:=2") }
        #expect(throws: MarbleError.duplicateParameter(filter: "blur", name: "sigma")) { try FilterSpec.parse("blur:sigma=1,sigma=2") }
        #expect(throws: MarbleError.emptyChain) { try FilterSpec.parseChain(" | ") }
        #expect(throws: MarbleError.self) { try FilterSpec.parse("depthmask:near=0.8,far=0.2").kernelForTesting() }
    }

    @Test func chainsAndRoundTrip() throws {
        let chain = try FilterSpec.parseChain("blur:sigma=2 | sobel | colormatrix:rr=0.5")
        #expect(chain.map(\.name) == ["blur", "sobel", "colormatrix"])
        for description in Marble.catalog {
            let spec = try FilterSpec(name: description.name)
            #expect(try FilterSpec.parse(spec.description) == spec, "\(spec) must parse back to itself")
        }
    }

    @Test func catalogIsComplete() {
        let names = Set(Marble.catalog.map(\.name))
        let marbleKit = ["ink", "godRay", "analog", "pixellate", "disco", "drive", "vibes", "bokeh", "blur", "polka", "stars", "depth"]
        let everyday = ["brightness", "exposure", "gamma", "colormatrix", "sharpen", "sobel", "grayscale", "invert", "threshold",
                        "resize", "crop", "flip", "rotate", "depthmask", "background"]
        #expect(names.isSuperset(of: marbleKit + everyday))
        #expect(names.count == Marble.catalog.count, "names are unique")
        for description in Marble.catalog {
            #expect(!description.summary.isEmpty && !description.summary.contains("\n"))
            for parameter in description.parameters {
                #expect(throws: Never.self, "default of \(description.name).\(parameter.name) is valid") {
                    try FilterSpec(name: description.name, values: [parameter.name: parameter.defaultValue])
                }
            }
        }
        let animated = ["godRay", "analog", "disco", "drive", "vibes", "stars", "depth"]
        for name in animated { #expect(Marble.description(of: name)?.parameter("time") != nil, "\(name) takes time") }
    }
}

extension FilterSpec {
    func kernelForTesting() throws { _ = try Marble.kernel(for: self) }
}
