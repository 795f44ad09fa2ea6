# frozen_string_literal: true

require "openssl"

module Bench
  # A self-signed certificate for the TLS benchmarks (their clients do not verify it).
  module SelfSigned
    module_function

    # Writes an EC P-256 certificate for localhost and 127.0.0.1, valid for a day, and its key.
    # @param dir [String]
    # @return [Array(String, String)] the certificate and key paths (PEM).
    def write(dir)
      key = OpenSSL::PKey::EC.generate("prime256v1")
      cert = OpenSSL::X509::Certificate.new
      cert.version = 2
      cert.serial = 1
      cert.subject = cert.issuer = OpenSSL::X509::Name.parse("/CN=localhost")
      cert.public_key = key
      cert.not_before = Time.now - 60
      cert.not_after = Time.now + 86_400
      factory = OpenSSL::X509::ExtensionFactory.new(cert, cert)
      cert.add_extension(factory.create_extension("subjectAltName", "DNS:localhost,IP:127.0.0.1"))
      cert.sign(key, OpenSSL::Digest.new("SHA256"))
      paths = [File.join(dir, "cert.pem"), File.join(dir, "key.pem")]
      File.write(paths[0], cert.to_pem)
      File.write(paths[1], key.private_to_pem)
      paths
    end
  end
end
