import SignInBase
import SignInProtocol

/// AWS's section of the configuration: which STS `AssumeRoleWithWebIdentity` goes to. Read here only;
/// `SignInConfiguration.awsRegion` and `awsSTSEndpoint` are views of it.
public struct AWSSettings: ConfigurationSection {
    public static let keys = ["aws_region", "aws_sts_endpoint"]

    /// `aws_region`: the region whose STS is asked; nil: STS's global endpoint.
    public var region: String?
    /// `aws_sts_endpoint`: the STS endpoint itself, for a partition or a test; nil: from `region`.
    public var stsEndpointOverride: String?

    public init() {}

    public init(from fields: ConfigurationFields) throws(SignInError) {
        if let region = try fields.string("aws_region") {
            let labels = region.split(separator: "-", omittingEmptySubsequences: false)
            guard region.count <= 32, labels.count >= 3, labels.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) } }) else {
                throw fields.fail("aws_region", "\"\(region)\" is not an AWS region (such as eu-west-1)")
            }
            self.region = region
        }
        stsEndpointOverride = try fields.url("aws_sts_endpoint")
    }

    /// Where `AssumeRoleWithWebIdentity` goes: `aws_sts_endpoint`, else `https://sts.REGION.amazonaws.com`, else
    /// `https://sts.amazonaws.com`.
    public var stsEndpoint: String {
        stsEndpointOverride ?? region.map { "https://sts.\($0).amazonaws.com" } ?? "https://sts.amazonaws.com"
    }
}

extension SignInConfiguration {
    /// AWS's section.
    public var aws: AWSSettings {
        get { sections[AWSSettings.self] }
        set { sections[AWSSettings.self] = newValue }
    }
    /// The AWS region whose STS `signin aws-credential-process` asks (`aws_region`); nil: STS's global endpoint.
    public var awsRegion: String? {
        get { aws.region }
        set { aws.region = newValue }
    }
    /// The STS endpoint itself (`aws_sts_endpoint`), for a partition or a test; nil: from `aws_region`.
    public var awsSTSEndpointOverride: String? {
        get { aws.stsEndpointOverride }
        set { aws.stsEndpointOverride = newValue }
    }
    /// Where `AssumeRoleWithWebIdentity` goes: `aws_sts_endpoint`, else `https://sts.REGION.amazonaws.com`, else
    /// `https://sts.amazonaws.com`.
    public var awsSTSEndpoint: String { aws.stsEndpoint }
}
