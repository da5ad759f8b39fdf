#if canImport(Glibc)
import Glibc
#endif
import CV4L2

extension V4L2Device {
    /// Every control of the device (VIDIOC_QUERY_EXT_CTRL with NEXT_CTRL; compound controls and
    /// class headings are left out), with its current value and menu items.
    func controls() throws(CaptureError) -> [CameraControl] {
        var result: [CameraControl] = []
        var query = v4l2_query_ext_ctrl()
        query.id = CV4L2_CTRL_FLAG_NEXT_CTRL
        while true {
            do throws(CaptureError) {
                try v4l2Ioctl(descriptor, CV4L2_VIDIOC_QUERY_EXT_CTRL, "VIDIOC_QUERY_EXT_CTRL", device: path, &query)
            } catch let .systemCall(_, _, code) where code == EINVAL || code == ENOTTY {
                break
            }
            defer { query.id |= CV4L2_CTRL_FLAG_NEXT_CTRL }
            let kind = CameraControl.Kind(v4l2: query.type)
            if query.type == 6 || kind == .other || query.flags & CV4L2_CTRL_FLAG_DISABLED != 0 { continue }
            var control = CameraControl(id: query.id, label: cText(query.name), kind: kind, minimum: query.minimum,
                                        maximum: query.maximum, step: Int64(truncatingIfNeeded: query.step),
                                        defaultValue: query.default_value, flags: query.flags)
            if kind == .menu || kind == .integerMenu {
                control.menu = menuItems(id: query.id, kind: kind, minimum: query.minimum, maximum: query.maximum)
            }
            if query.flags & CV4L2_CTRL_FLAG_WRITE_ONLY == 0 && kind != .button {
                if kind == .string {
                    control.text = try? readText(control)
                } else {
                    control.value = try? read(control)
                }
            }
            query.id = control.id
            result.append(control)
        }
        return result
    }

    private func menuItems(id: UInt32, kind: CameraControl.Kind, minimum: Int64, maximum: Int64) -> [CameraControl.MenuItem] {
        var items: [CameraControl.MenuItem] = []
        guard minimum >= 0, maximum >= minimum, maximum - minimum < 1024 else { return items }
        for index in minimum...maximum {
            var name = [CChar](repeating: 0, count: 32)
            var value: Int64 = 0
            // EINVAL marks an index the menu skips.
            guard cv4l2_query_menu(descriptor, id, UInt32(index), &name, &value) == 0 else { continue }
            let text = kind == .integerMenu ? String(value) : String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            items.append(CameraControl.MenuItem(index: index, name: text))
        }
        return items
    }

    /// The current value of a numeric control.
    func read(_ control: CameraControl) throws(CaptureError) -> Int64 {
        var value: Int64 = 0
        try systemCall("VIDIOC_G_EXT_CTRLS(\(control.name))", device: path) {
            cv4l2_get_control(descriptor, control.id, control.kind == .integer64 ? 1 : 0, &value)
        }
        return value
    }

    /// The current text of a string control.
    func readText(_ control: CameraControl) throws(CaptureError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(max(0, control.maximum)) + 1)
        let size = UInt32(buffer.count)
        try systemCall("VIDIOC_G_EXT_CTRLS(\(control.name))", device: path) {
            cv4l2_get_string_control(descriptor, control.id, &buffer, size)
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Sets each control by name (checked against the device's list, range and menu first, so a
    /// wrong name or value is a typed error naming what is valid); returns the controls as read
    /// back afterwards.
    @discardableResult
    func apply(_ settings: [ControlSetting]) throws(CaptureError) -> [CameraControl] {
        guard !settings.isEmpty else { return [] }
        let all = try controls()
        var applied: [CameraControl] = []
        for setting in settings {
            guard var control = all.first(where: { $0.name == setting.name }) else {
                throw .unknownControl(device: path, control: setting.name, valid: all.map(\.name))
            }
            let value = try control.parse(setting.value, device: path)
            if control.kind == .string {
                var text = Array(setting.value.utf8CString)
                let size = UInt32(text.count)
                try systemCall("VIDIOC_S_EXT_CTRLS(\(control.name))", device: path) {
                    cv4l2_set_string_control(descriptor, control.id, &text, size)
                }
                control.text = try? readText(control)
            } else {
                do throws(CaptureError) {
                    try systemCall("VIDIOC_S_EXT_CTRLS(\(control.name))", device: path) {
                        cv4l2_set_control(descriptor, control.id, control.kind == .integer64 ? 1 : 0, value)
                    }
                } catch let .systemCall(_, _, code) where code == EINVAL || code == ERANGE || code == EACCES {
                    throw .controlValue(device: path, control: control.name, value: setting.value,
                                        reason: "the driver refused it (\(CaptureError.message(for: code)))", valid: control.validValues)
                }
                if control.kind != .button, control.flags & CV4L2_CTRL_FLAG_WRITE_ONLY == 0 { control.value = try? read(control) }
            }
            applied.append(control)
        }
        return applied
    }

    /// Presses the button control called `name` (case-insensitive), e.g. vivid's `Disconnect`.
    func pressButton(named name: String) throws(CaptureError) {
        let all = try controls()
        let wanted = name.lowercased()
        guard let button = all.first(where: { $0.kind == .button && ($0.label.lowercased() == wanted || $0.name == wanted) }) else {
            throw .invalidRequest("\(path): no button control named \(name) (controls: \(all.map(\.label).joined(separator: ", ")))")
        }
        var control = v4l2_control(id: button.id, value: 1)
        try v4l2Ioctl(descriptor, CV4L2_VIDIOC_S_CTRL, "VIDIOC_S_CTRL(\(button.label))", device: path, &control)
    }
}

extension CaptureDevices {
    /// Presses a button control of `path` on a short-lived second open of the node (streaming
    /// elsewhere is unaffected). Tests use vivid's `Disconnect` to unplug a device mid-stream.
    public static func pressButton(named name: String, on path: String) throws(CaptureError) {
        let device = try V4L2Device(path: path)
        defer { device.close() }
        try device.pressButton(named: name)
    }

    /// Every control of `path`, with current values (a short-lived open; works while another
    /// program streams from the node).
    public static func controls(of path: String) throws(CaptureError) -> [CameraControl] {
        let device = try V4L2Device(path: path)
        defer { device.close() }
        return try device.controls()
    }

    /// Sets controls of `path` (a short-lived open; controls keep their values after it closes);
    /// returns them as read back.
    @discardableResult
    public static func setControls(_ settings: [ControlSetting], on path: String) throws(CaptureError) -> [CameraControl] {
        let device = try V4L2Device(path: path)
        defer { device.close() }
        return try device.apply(settings)
    }
}
