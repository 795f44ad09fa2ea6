# frozen_string_literal: true

require "openssl"
require "socket"
require "tmpdir"
require "fileutils"
require "uri"

# Test certificates: a throwaway CA and server certificates it signs, written as PEM files.
module TLSCertificates
  # Connects to 127.0.0.1:port over TLS, verifying the server's certificate against `ca`, and
  # yields the connected socket; both sockets are closed after the block.
  # @param port [Integer]
  # @param ca [String] the CA's PEM file.
  # @yieldparam ssl [OpenSSL::SSL::SSLSocket]
  # @return [Object] the block's value.
  def self.connect(port, ca)
    context = OpenSSL::SSL::SSLContext.new
    context.set_params(verify_mode: OpenSSL::SSL::VERIFY_PEER, ca_file: ca)
    tcp = TCPSocket.new("127.0.0.1", port)
    ssl = OpenSSL::SSL::SSLSocket.new(tcp, context)
    ssl.hostname = "127.0.0.1"
    ssl.connect
    yield ssl
  ensure
    ssl&.close
    tcp&.close
  end

  # A CA and leaf certificates for the given names, in a fresh directory.
  # @return [Hash] "ca" => path, and for each name: name => [cert_path, key_path].
  def self.make(dir, *names)
    ca_key = OpenSSL::PKey::EC.generate("prime256v1")
    ca = sign(ca_key, ca_key, "Heron test CA", nil, ca: true)
    File.write(File.join(dir, "ca.crt"), ca.to_pem)
    names.each_with_object({ "ca" => File.join(dir, "ca.crt") }) do |name, paths|
      key = OpenSSL::PKey::EC.generate("prime256v1")
      cert = sign(key, ca_key, name, ca)
      paths[name] = [File.join(dir, "#{name}.crt"), File.join(dir, "#{name}.key")]
      File.write(paths[name][0], cert.to_pem)
      File.write(paths[name][1], key.private_to_pem)
    end
  end

  # Test setup for TLS tests: a CA and certificates for `NAMES` (the including class's) in a
  # fresh directory (@paths, see {TLSCertificates.make}), and ssl:// binds that use them.
  module Fixture
    def setup
      super
      @dir = Dir.mktmpdir
      @paths = TLSCertificates.make(@dir, *self.class::NAMES)
    end

    def teardown
      FileUtils.rm_rf(@dir)
      super
    end

    # @return [String] an ssl:// bind on an ephemeral loopback port serving `names`' certificates.
    def ssl_bind(*names, **extra)
      query = names.flat_map { |n| [["cert", @paths[n][0]], ["key", @paths[n][1]]] } + extra.map { |k, v| [k.to_s, v] }
      "ssl://127.0.0.1:0?#{URI.encode_www_form(query)}"
    end
  end

  def self.sign(key, signer, name, issuer, ca: false)
    cert = OpenSSL::X509::Certificate.new
    cert.version = 2
    cert.serial = OpenSSL::BN.rand(64)
    cert.subject = OpenSSL::X509::Name.parse("/CN=#{name}")
    cert.issuer = issuer ? issuer.subject : cert.subject
    cert.public_key = key
    cert.not_before = Time.now - 60
    cert.not_after = Time.now + 3600
    factory = OpenSSL::X509::ExtensionFactory.new(cert, issuer || cert)
    cert.add_extension(factory.create_extension("basicConstraints", ca ? "CA:TRUE" : "CA:FALSE", true))
    alt = name.match?(/\A[\d.]+\z/) ? "IP:#{name}" : "DNS:#{name}"
    cert.add_extension(factory.create_extension("subjectAltName", alt)) unless ca
    cert.sign(signer, OpenSSL::Digest.new("SHA256"))
  end
end
