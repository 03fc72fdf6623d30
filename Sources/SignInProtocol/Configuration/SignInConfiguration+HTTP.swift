
import SignInBase
import SignInTransport

extension SignInConfiguration {
    /// The HTTP settings this configuration asks for (`http_timeout`, `ca_file`, `proxy`): all the HTTP layer takes of it.
    package var httpSettings: HTTPSettings {
        HTTPSettings(connectTimeout: min(10, httpTimeoutSeconds), totalTimeout: httpTimeoutSeconds, caFile: caFile, proxy: proxy)
    }
}

extension HTTPClient {
    /// The client a configuration's settings ask for.
    package init(configuration: SignInConfiguration) { self.init(configuration.httpSettings) }
}
