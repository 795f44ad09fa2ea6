# frozen_string_literal: true

# A classic-style Sinatra 3 app (Rack 2 only): params from a form body, a halt, a redirect.
require "sinatra/base"

# The app under test.
class Rack2SinatraApp < Sinatra::Base
  set :environment, :production
  set :host_authorization, permitted_hosts: [] if settings.respond_to?(:host_authorization)

  get("/hello/:name") { "Hello #{params[:name]} from Sinatra #{Sinatra::VERSION} on Rack #{Rack.release}" }
  post("/form") { "name=#{params[:name]} size=#{request.body.read.bytesize}" }
  get("/teapot") { halt 418, { "X-Reason" => "short and stout" }, "teapot" }
  get("/away") { redirect "/hello/there" }
end

run Rack2SinatraApp
