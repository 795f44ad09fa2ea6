# frozen_string_literal: true

require "openssl"
require "uri"
require_relative "../config_error"
require_relative "development_certificate"

module Heron
  module TLS
    # The TLS settings of one `ssl://` bind, turned into an OpenSSL::SSL::SSLContext.
    #
    # `ssl://HOST:PORT?cert=PATH&key=PATH` with, optionally: `chain=PATH` (intermediate
    # certificates sent after the certificate), `min_version=TLSv1_2|TLSv1_3` (default TLS 1.2),
    # `ciphers=LIST` (TLS 1.2 suites; default: ECDHE with AES-GCM or ChaCha20 only), `verify=peer|
    # force_peer` with `ca=PATH` (client certificates). Several `cert`/`key` pairs serve several
    # names (SNI): the first whose certificate matches the name the client asks for, else the first.
    # No cert in development makes (once) and reuses a self-signed certificate for localhost.
    class Context
      MIN_VERSIONS = { "TLSv1_2" => OpenSSL::SSL::TLS1_2_VERSION, "TLSv1_3" => OpenSSL::SSL::TLS1_3_VERSION }.freeze
      # TLS 1.2 suites with forward secrecy and an AEAD cipher (TLS 1.3's suites are always safe).
      DEFAULT_CIPHERS = %w[ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-RSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384
                           ECDHE-RSA-AES256-GCM-SHA384 ECDHE-ECDSA-CHACHA20-POLY1305
                           ECDHE-RSA-CHACHA20-POLY1305].join(":").freeze
      VERIFY_MODES = { "none" => OpenSSL::SSL::VERIFY_NONE, "peer" => OpenSSL::SSL::VERIFY_PEER,
                       "force_peer" => OpenSSL::SSL::VERIFY_PEER | OpenSSL::SSL::VERIFY_FAIL_IF_NO_PEER_CERT }.freeze
      PARAMS = %w[cert key chain ca verify min_version ciphers].freeze

      # @return [OpenSSL::SSL::SSLContext] the context new connections use (replaced by {#reload}).
      attr_reader :ssl_context

      # @param uri [String] the bind, `ssl://HOST:PORT?cert=...&key=...`.
      # @param environment [String] "development" allows a missing certificate.
      # @param log [#call, nil] receives one line when a development certificate is made.
      # @raise [ConfigError] for a missing or unreadable certificate or key, or an unknown parameter.
      # @param http2 [Boolean] offer h2 by ALPN (else http/1.1 only).
      def initialize(uri, environment: "development", log: nil, http2: false)
        @uri = uri
        @protocols = http2 ? %w[h2 http/1.1] : %w[http/1.1]
        @params = Context.params(uri)
        @environment = environment
        @log = log
        @ssl_context = build
      end

      # Reads the certificate files again; connections accepted afterwards get the new ones and
      # open connections keep theirs.
      # @return [OpenSSL::SSL::SSLContext]
      # @raise [ConfigError] when the files cannot be read (the old context stays in use).
      def reload
        @ssl_context = build
      end

      # @param uri [String]
      # @return [Hash{String => Array<String>}] the query parameters, each a list (cert and key repeat).
      # @raise [ConfigError] for a parameter this class does not know.
      def self.params(uri)
        query = URI.parse(uri).query.to_s
        pairs = URI.decode_www_form(query)
        unknown = pairs.map(&:first) - PARAMS
        raise ConfigError, "bind #{uri}: unknown TLS parameter #{unknown.first.inspect} (known: #{PARAMS.join(', ')})" if unknown.any?
        pairs.group_by(&:first).transform_values { |list| list.map(&:last) }
      rescue URI::InvalidURIError, ArgumentError => e
        raise ConfigError, "bind #{uri}: #{e.message}"
      end

      private

      def build
        pairs = certificates.map { |cert, key, chain| [cert, context_for(cert, key, chain)] }
        pairs.first.last.servername_cb = ->(args) { pick(pairs, args[1]) } if pairs.size > 1
        pairs.each { |_, context| context.freeze }
        pairs.first.last
      rescue OpenSSL::OpenSSLError, ArgumentError => e
        raise ConfigError, "bind #{@uri}: #{e.message}"
      end

      def certificates
        certs = @params.fetch("cert", [])
        keys = @params.fetch("key", [])
        return [DevelopmentCertificate.fetch(log: @log)] if certs.empty? && keys.empty? && @environment == "development"
        raise ConfigError, "bind #{@uri}: give cert= and key= (as many of each)" if certs.empty? || certs.size != keys.size
        chain = @params["chain"]&.first&.then { |path| read_chain(path) } || []
        certs.zip(keys).map { |cert, key| [read_cert(cert), read_key(key), chain] }
      end

      def context_for(cert, key, chain)
        context = OpenSSL::SSL::SSLContext.new
        context.add_certificate(cert, key, chain)
        context.min_version = min_version
        context.ciphers = @params.fetch("ciphers", [DEFAULT_CIPHERS]).first
        context.options |= OpenSSL::SSL::OP_NO_COMPRESSION | OpenSSL::SSL::OP_CIPHER_SERVER_PREFERENCE
        context.alpn_select_cb = ->(offered) { @protocols.find { |protocol| offered.include?(protocol) } }
        client_verification(context)
        context
      end

      def client_verification(context)
        mode = @params.fetch("verify", ["none"]).first
        context.verify_mode = VERIFY_MODES.fetch(mode) { raise ConfigError, "bind #{@uri}: verify=#{mode} (use none, peer or force_peer)" }
        return if mode == "none"
        ca = @params["ca"]&.first or raise ConfigError, "bind #{@uri}: verify=#{mode} needs ca=PATH"
        context.cert_store = OpenSSL::X509::Store.new.tap { |store| store.add_file(ca) }
      rescue OpenSSL::X509::StoreError => e
        raise ConfigError, "bind #{@uri}: ca=#{ca}: #{e.message}"
      end

      def min_version
        name = @params.fetch("min_version", ["TLSv1_2"]).first
        MIN_VERSIONS.fetch(name) { raise ConfigError, "bind #{@uri}: min_version=#{name} (use #{MIN_VERSIONS.keys.join(' or ')})" }
      end

      def pick(pairs, hostname)
        found = hostname && pairs.find { |cert, _| OpenSSL::SSL.verify_certificate_identity(cert, hostname) }
        (found || pairs.first).last
      end

      def read_cert(path) = OpenSSL::X509::Certificate.new(read(path))
      def read_key(path) = OpenSSL::PKey.read(read(path))

      def read_chain(path)
        read(path).scan(/-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----/m).map { |pem| OpenSSL::X509::Certificate.new(pem) }
      end

      def read(path)
        File.read(path)
      rescue SystemCallError => e
        raise ConfigError, "bind #{@uri}: cannot read #{path}: #{e.message}"
      end
    end
  end
end
