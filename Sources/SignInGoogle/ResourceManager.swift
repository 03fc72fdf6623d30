import SignInBase
import SignInProtocol
import SignInStorage
import SignInTransport
import FoundationEssentials

/// Google's Cloud Resource Manager API, for the one thing the metadata server may need from it: a project's
/// number when the configuration gives only its ID (`GET v1/projects/{projectId}` → `projectNumber`).
struct ResourceManagerClient {
    let base: String
    let http: HTTPClient
    static let endpointName = "Cloud Resource Manager API"

    init(configuration: SignInConfiguration) {
        base = GoogleAPI.base(configuration.resourceManagerEndpoint)
        http = HTTPClient(configuration: configuration)
    }

    func projectNumber(of projectID: String, bearer: String) throws(SignInError) -> String {
        let r = try http.get("\(base)/v1/projects/\(projectID)", endpoint: Self.endpointName, headers: ["Authorization: Bearer \(bearer)"])
        let o = JSONValue.object(from: r.body)
        guard r.status == 200, let o else {
            let (status, message) = GoogleAPI.error(r, o)
            let detail = r.status == 403 || r.status == 404
                ? "cannot read project \(projectID) (the account needs resourcemanager.projects.get on it, or set project_number)"
                : "looking up project \(projectID) failed"
            throw .providerError(endpoint: Self.endpointName, code: status, detail: detail + (message.map { ": \($0)" } ?? ""))
        }
        guard let n = o["projectNumber"]?.string ?? o["projectNumber"]?.int.map({ String($0) }), !n.isEmpty, n.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .providerError(endpoint: Self.endpointName, code: "invalid_response", detail: "project \(projectID) came without a projectNumber")
        }
        return n
    }
}
