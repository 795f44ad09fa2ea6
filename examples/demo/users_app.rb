# frozen_string_literal: true

require "json"
require "rack/utils"
require_relative "users/user_serializer"

module Demo
  # The /users JSON API of seed 004, on SQLite, to show what the profiler finds:
  #
  #   GET /users                every user with roles, groups, employee id and last login;
  #                             reads associations per user: 4 queries a user (the N+1)
  #   GET /users?eager=1        the same JSON from 5 queries (Sequel eager loading)
  #   GET /users?roles=admin    only users holding one of these roles (comma-separated)
  #
  # Mounted at /users, so it answers PATH_INFO "" and "/"; anything else is 404.
  class UsersApp
    JSON_HEADERS = { "content-type" => "application/json" }.freeze

    # @param env [Hash] the Rack env.
    # @return [Array(Integer, Hash, Array<String>)] the Rack response.
    def call(env)
      return error(404, "not found") unless ["", "/"].include?(env["PATH_INFO"])
      return error(405, "only GET") unless %w[GET HEAD].include?(env["REQUEST_METHOD"])
      params = Rack::Utils.parse_query(env["QUERY_STRING"].to_s)
      users = dataset(params).all.map { |user| Users::UserSerializer.new(user).as_json }
      respond(200, users: users, count: users.size)
    rescue Rack::Utils::InvalidParameterError
      error(400, "bad query string")
    end

    private

    def dataset(params)
      users = Users::User.order(:id)
      roles = params["roles"].to_s.split(",").map(&:strip).reject(&:empty?)
      users = users.with_roles(roles) unless roles.empty?
      eager?(params) ? users.eager(*Users::User::EAGER) : users
    end

    def eager?(params)
      %w[1 true yes].include?(params["eager"].to_s)
    end

    def error(status, message)
      respond(status, error: message)
    end

    def respond(status, data)
      body = JSON.generate(data)
      [status, JSON_HEADERS.merge("content-length" => body.bytesize.to_s), [body]]
    end
  end
end
