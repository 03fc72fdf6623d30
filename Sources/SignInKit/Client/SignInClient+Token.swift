import SignInBase
import SignInProtocol
import SignInStorage
import SignInGrant
import FoundationEssentials

// The token path is one value with its ports: `TokenUseCase` (SignInGrant), whose comment states the whole decision
// tree and lists the files that decide. The client builds it from its store, the provider's token endpoint, the
// wall clock and the families, and asks it.

extension SignInClient {
    /// The token use case over this client's store, its provider's token endpoint, the wall clock and the families
    /// (`TokenFamilies`); what it saves is told to this client's observers.
    package var tokenUseCase: TokenUseCase {
        TokenUseCase(configuration: configuration, store: storage, endpoint: ProviderTokenEndpoint(configuration: configuration),
                     families: TokenFamilies.all, changed: { self.currentUserChanged() })
    }

    /// The one token path: a token as `request` asks, with no browser.
    ///
    /// 0. The principal (`request.principal`): a given service-account chain; `.configured`, the chain a family's
    ///    configuration section names (Google's `impersonate_service_account`), else the person; `.person`, the person
    ///    whatever the configuration says. No consumer reads the setting itself.
    /// 1. A request that names a service account or carries a family's parameters is offered to each family
    ///    (`TokenFamilies`); the first that derives it answers, cached in the entry.
    /// 2. The person's access token for one API (`audience`, `resource`): RFC 8693 exchange, or RFC 8707 refresh.
    /// 3. An ID token for an audience other than this client: `.unsupported`.
    /// 4. The person's token: `restore` (no network while the stored one is fresh for `minimumValidity` and no
    ///    refresh is forced; one refresh for many callers and processes; rotation saved first). Scopes a request
    ///    names for the person's access token must all be granted: `.unsupported` naming the missing ones otherwise.
    /// 5. The answer says its type: `DPoP` for an access token bound to this machine's key (with the proof
    ///    `proofFor` asks, never one for the provider's own endpoints), else `Bearer`.
    /// The tree is `TokenUseCase`'s, and written there in full.
    public func token(_ request: TokenRequest) throws(SignInError) -> IssuedToken {
        try tokenUseCase.token(request)
    }

    /// Whether answering `request` for the person would refresh first (the stored token is not fresh enough,
    /// was marked rejected, or a refresh is forced). Reads the store only; no network.
    public func wouldRefresh(_ request: TokenRequest) throws(SignInError) -> Bool {
        try tokenUseCase.wouldRefresh(request)
    }

    /// The service-account chain `principal` comes to (empty: the person): step 0's rule, which a consumer that
    /// shows whom it serves (the metadata server's account) asks too.
    public func serviceAccountChain(for principal: TokenRequest.Principal) -> [String] {
        tokenUseCase.serviceAccountChain(for: principal)
    }
}
