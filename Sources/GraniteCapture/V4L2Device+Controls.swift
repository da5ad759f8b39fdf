#if canImport(Glibc)
import Glibc
#endif
import CV4L2

extension V4L2Device {
    /// Presses the button control called `name` (case-insensitive), e.g. vivid's `Disconnect`.
    func pressButton(named name: String) throws(CaptureError) {
        var query = v4l2_queryctrl()
        query.id = CV4L2_CTRL_FLAG_NEXT_CTRL
        var names: [String] = []
        while true {
            do throws(CaptureError) {
                try v4l2Ioctl(descriptor, CV4L2_VIDIOC_QUERYCTRL, "VIDIOC_QUERYCTRL", device: path, &query)
            } catch let .systemCall(_, _, code) where code == EINVAL {
                break
            }
            let found = cText(query.name)
            names.append(found)
            if found.lowercased() == name.lowercased(), query.type == CV4L2_CTRL_TYPE_BUTTON,
               query.flags & CV4L2_CTRL_FLAG_DISABLED == 0 {
                var control = v4l2_control(id: query.id, value: 1)
                try v4l2Ioctl(descriptor, CV4L2_VIDIOC_S_CTRL, "VIDIOC_S_CTRL(\(found))", device: path, &control)
                return
            }
            query.id |= CV4L2_CTRL_FLAG_NEXT_CTRL
        }
        throw .invalidRequest("\(path): no button control named \(name) (controls: \(names.joined(separator: ", ")))")
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
}
