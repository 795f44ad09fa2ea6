# frozen_string_literal: true

require "openssl"
require_relative "usage_error"

module Heron
  module Attack
    # Builds the client TLS context for https:// targets: certificates are verified against the
    # system's trusted CAs (or the CA file of --cacert) and the URL's host name, unless --insecure
    # turns verification off (self-signed staging and development certificates).
    module TLSContext
      # Bytes a --cacert file may have: a CA bundle is a few hundred kilobytes at most.
      MAX_CA_FILE = 4 * 1024 * 1024

      # @param insecure [Boolean] skip certificate and host name verification.
      # @param cacert [String, nil] a PEM file of CA certificates to trust instead of the system's.
      # @param alpn [Array<String>] the protocols offered by ALPN: ["h2"] for --http2.
      # @return [OpenSSL::SSL::SSLContext] a set-up (frozen) context (shared by every connection and, after
      #   a fork, by every generator process).
      # @raise [UsageError] when the CA file cannot be read or holds no certificate.
      def self.build(insecure: false, cacert: nil, alpn: ["http/1.1"])
        context = OpenSSL::SSL::SSLContext.new
        context.min_version = OpenSSL::SSL::TLS1_2_VERSION
        context.alpn_protocols = alpn
        if insecure
          context.verify_mode = OpenSSL::SSL::VERIFY_NONE
        else
          context.verify_mode = OpenSSL::SSL::VERIFY_PEER
          context.cert_store = store(cacert)
        end
        context.tap(&:setup)
      end

      # @param cacert [String, nil]
      # @return [OpenSSL::X509::Store]
      # @raise [UsageError]
      def self.store(cacert)
        store = OpenSSL::X509::Store.new
        return store.tap(&:set_default_paths) unless cacert
        certificates(cacert).each { |certificate| store.add_cert(certificate) }
        store
      end

      # @param path [String] a PEM file.
      # @return [Array<OpenSSL::X509::Certificate>] at least one.
      # @raise [UsageError]
      def self.certificates(path)
        raise UsageError, "--cacert #{path}: larger than #{MAX_CA_FILE} bytes" if File.size(path) > MAX_CA_FILE
        found = File.read(path).scan(/-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----/m)
        raise UsageError, "--cacert #{path}: no PEM certificate in it" if found.empty?
        found.map { |pem| OpenSSL::X509::Certificate.new(pem) }
      rescue SystemCallError, OpenSSL::X509::CertificateError => e
        raise UsageError, "--cacert #{path}: #{e.message}"
      end
    end
  end
end
