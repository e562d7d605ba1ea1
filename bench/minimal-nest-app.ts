import 'reflect-metadata';
import {
  Controller,
  Get,
  Header,
  HttpCode,
  Injectable,
  Module,
  Post,
  type CanActivate,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';

/**
 * The floor this stack imposes: NestJS on Fastify with one global guard, answering one route with
 * a fixed JSON body and nothing else (no logging, no validation, no database). The benchmark runs
 * it as a second baseline beside the bare `node:http` server:
 * `node minimal-nest-app.js <port> <GET|POST> <path> <json>`.
 */
const [port, method, path, body] = process.argv.slice(2);
const payload = Buffer.from(body ?? '{}');

@Injectable()
class AllowGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

@Controller()
class FixedBodyController {
  @Header('Content-Type', 'application/json; charset=utf-8')
  @HttpCode(200)
  answer(): Buffer {
    return payload;
  }
}

// The route is the scenario's own method and path, declared as its decorator would.
const route = method === 'POST' ? Post(path) : Get(path);
route(
  FixedBodyController.prototype,
  'answer',
  Object.getOwnPropertyDescriptor(FixedBodyController.prototype, 'answer')!,
);

@Module({
  controllers: [FixedBodyController],
  providers: [{ provide: APP_GUARD, useClass: AllowGuard }],
})
class MinimalModule {}

async function start(): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    MinimalModule,
    new FastifyAdapter(),
    {
      logger: false,
    },
  );
  await app.listen(Number(port), '127.0.0.1');
  process.send?.('ready');
}

void start();
