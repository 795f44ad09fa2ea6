# frozen_string_literal: true

require "openssl"
require "fileutils"

module Heron
  module TLS
    # A self-signed certificate for localhost, 127.0.0.1 and ::1, made once and reused, for
    # `ssl://localhost:PORT` in development. It lives in `$HERON_DEV_CERT_DIR`, else
    # `$XDG_STATE_HOME/heron`, else `~/.local/state/heron` (files `localhost.crt`, `localhost.key`).
    module DevelopmentCertificate
      NAMES = "DNS:localhost,IP:127.0.0.1,IP:0:0:0:0:0:0:0:1"
      DAYS = 365

      module_function

      # @param dir [String] where the certificate and key are kept.
      # @param log [#call, nil] told, once, where a new certificate is and how to trust it.
      # @return [Array] [certificate, key, chain] as add_certificate takes them.
      def fetch(dir: default_dir, log: nil)
        cert_path, key_path = paths(dir)
        make(dir, cert_path, key_path, log) unless usable?(cert_path, key_path)
        [OpenSSL::X509::Certificate.new(File.read(cert_path)), OpenSSL::PKey.read(File.read(key_path)), []]
      end

      # @return [String] the directory used when none is given.
      def default_dir
        ENV["HERON_DEV_CERT_DIR"] || File.join(ENV["XDG_STATE_HOME"] || File.join(Dir.home, ".local/state"), "heron")
      end

      # @param dir [String]
      # @return [Array<String>] the certificate's and the key's paths.
      def paths(dir) = [File.join(dir, "localhost.crt"), File.join(dir, "localhost.key")]

      def usable?(cert_path, key_path)
        return false unless File.exist?(cert_path) && File.exist?(key_path)
        OpenSSL::X509::Certificate.new(File.read(cert_path)).not_after > Time.now + 86_400
      rescue OpenSSL::OpenSSLError
        false
      end

      def make(dir, cert_path, key_path, log)
        FileUtils.mkdir_p(dir, mode: 0o700)
        key = OpenSSL::PKey::EC.generate("prime256v1")
        File.write(key_path, key.private_to_pem, perm: 0o600)
        File.write(cert_path, certificate(key).to_pem)
        log&.call("made a development certificate for localhost: #{cert_path} (trust it with " \
                  "`curl --cacert #{cert_path}`, or add it to your system or browser's trusted certificates)")
      end

      def certificate(key)
        cert = OpenSSL::X509::Certificate.new
        cert.version = 2
        cert.serial = OpenSSL::BN.rand(64)
        cert.subject = cert.issuer = OpenSSL::X509::Name.parse("/CN=localhost")
        cert.public_key = key
        cert.not_before = Time.now - 60
        cert.not_after = Time.now + (DAYS * 86_400)
        extensions(cert)
        cert.sign(key, OpenSSL::Digest.new("SHA256"))
      end

      def extensions(cert)
        factory = OpenSSL::X509::ExtensionFactory.new(cert, cert)
        cert.add_extension(factory.create_extension("subjectAltName", NAMES))
        cert.add_extension(factory.create_extension("basicConstraints", "CA:TRUE", true))
        cert.add_extension(factory.create_extension("keyUsage", "digitalSignature,keyCertSign", true))
        cert.add_extension(factory.create_extension("subjectKeyIdentifier", "hash"))
      end
      private_class_method :usable?, :make, :certificate, :extensions
    end
  end
end
