/// The status and `Failure` reason of an error answer, one extension per generated operation
/// (each has its own output enum with the same error cases).
extension Components.Schemas.Failure {
    var text: String { error.reason + (error.details.map { ": " + $0 } ?? "") }
}

extension Operations.GetPins.Output {
    /// The HTTP status and the service's reason (unescaped; errors escape it when printed).
    var failure: (status: Int, reason: String) {
        switch self {
        case .ok: (200, "unexpected success")
        case let .badRequest(answer): (400, (try? answer.body.json.text) ?? "bad request")
        case let .unauthorized(answer): (401, (try? answer.body.json.text) ?? "unauthorized")
        case let .notFound(answer): (404, (try? answer.body.json.text) ?? "not found")
        case let .conflict(answer): (409, (try? answer.body.json.text) ?? "insufficient funds")
        case let .clientError(status, answer): (status, (try? answer.body.json.text) ?? "refused")
        case let .serverError(status, answer): (status, (try? answer.body.json.text) ?? "server error")
        case let .undocumented(status, _): (status, "an answer the API document does not describe")
        }
    }
}

extension Operations.AddPin.Output {
    /// The HTTP status and the service's reason (unescaped; errors escape it when printed).
    var failure: (status: Int, reason: String) {
        switch self {
        case .accepted: (200, "unexpected success")
        case let .badRequest(answer): (400, (try? answer.body.json.text) ?? "bad request")
        case let .unauthorized(answer): (401, (try? answer.body.json.text) ?? "unauthorized")
        case let .notFound(answer): (404, (try? answer.body.json.text) ?? "not found")
        case let .conflict(answer): (409, (try? answer.body.json.text) ?? "insufficient funds")
        case let .clientError(status, answer): (status, (try? answer.body.json.text) ?? "refused")
        case let .serverError(status, answer): (status, (try? answer.body.json.text) ?? "server error")
        case let .undocumented(status, _): (status, "an answer the API document does not describe")
        }
    }
}

extension Operations.GetPinByRequestId.Output {
    /// The HTTP status and the service's reason (unescaped; errors escape it when printed).
    var failure: (status: Int, reason: String) {
        switch self {
        case .ok: (200, "unexpected success")
        case let .badRequest(answer): (400, (try? answer.body.json.text) ?? "bad request")
        case let .unauthorized(answer): (401, (try? answer.body.json.text) ?? "unauthorized")
        case let .notFound(answer): (404, (try? answer.body.json.text) ?? "not found")
        case let .conflict(answer): (409, (try? answer.body.json.text) ?? "insufficient funds")
        case let .clientError(status, answer): (status, (try? answer.body.json.text) ?? "refused")
        case let .serverError(status, answer): (status, (try? answer.body.json.text) ?? "server error")
        case let .undocumented(status, _): (status, "an answer the API document does not describe")
        }
    }
}

extension Operations.DeletePinByRequestId.Output {
    /// The HTTP status and the service's reason (unescaped; errors escape it when printed).
    var failure: (status: Int, reason: String) {
        switch self {
        case .accepted: (200, "unexpected success")
        case let .badRequest(answer): (400, (try? answer.body.json.text) ?? "bad request")
        case let .unauthorized(answer): (401, (try? answer.body.json.text) ?? "unauthorized")
        case let .notFound(answer): (404, (try? answer.body.json.text) ?? "not found")
        case let .conflict(answer): (409, (try? answer.body.json.text) ?? "insufficient funds")
        case let .clientError(status, answer): (status, (try? answer.body.json.text) ?? "refused")
        case let .serverError(status, answer): (status, (try? answer.body.json.text) ?? "server error")
        case let .undocumented(status, _): (status, "an answer the API document does not describe")
        }
    }
}
